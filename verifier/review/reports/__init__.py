"""Report formats of a review: markdown (one PR comment), json (the evidence), junit, sarif."""

from __future__ import annotations

from typing import Literal

from verifier.review.reports import junit, markdown, sarif
from verifier.review.review_evidence import ReviewEvidence

Format = Literal["markdown", "json", "junit", "sarif"]
FORMATS: tuple[Format, ...] = ("markdown", "json", "junit", "sarif")
#: File name of each format under --out-dir.
FILENAMES: dict[Format, str] = {
    "markdown": "review.md",
    "json": "review.json",
    "junit": "review.junit.xml",
    "sarif": "review.sarif",
}


def render(fmt: Format, ev: ReviewEvidence) -> str:
    if fmt == "markdown":
        return markdown.render(ev)
    if fmt == "json":
        return ev.to_json() + "\n"
    if fmt == "junit":
        return junit.render(ev)
    return sarif.render(ev) + "\n"
