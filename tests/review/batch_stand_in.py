"""A stand-in for `review` in unit tests of the batch's own logic: evidence bound as the service
binds it (digests of the patch files it was given, the base resolved in a real git repository,
`review_id` over `identity`), resolved exactly when the patch contains "GOOD"; a patch containing
"GARBLED" is bad input, as a patch that does not apply is; one containing "BUSY" finds the machine too
busy (HostOverloaded, as a review that got no sandbox slot in time), "BUSYONCE" only on its first
call. The real engine runs batches in
tests/review/test_instances_engine.py."""

from __future__ import annotations

from typing import Any

from tests.review.fake_evidence import evidence, row
from verifier import __version__
from verifier.errors import HostOverloaded, InvalidInput
from verifier.hashing import sha256_bytes
from verifier.review.gitread import GitRepo
from verifier.review.review_evidence import (
    ExpectedTest,
    Outcome,
    Resolution,
    ReviewEvidence,
    TestClass,
    TreeRef,
    identity,
    review_id,
)

TEST = "tests/test_a.py::test_fix"


class StandIn:
    """`review` as the batch calls it: evidence bound like the service's, and a call count."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        #: The machine-wide slots each call was given (`admission=`; None when none was).
        self.admissions: list[Any] = []

    def __call__(self, req: Any, *, admission: Any = None) -> ReviewEvidence:
        self.admissions.append(admission)
        patch = req.patch.read_bytes()
        self.calls.append(patch.decode())
        if b"GARBLED" in patch:
            raise InvalidInput(f"the patch {req.patch} does not apply")
        if b"BUSY" in patch and (b"BUSYONCE" not in patch or self.calls.count(patch.decode()) == 1):
            raise HostOverloaded("no sandbox slot came free within 600 s (2 of 2 in use)")
        commit, tree = GitRepo(req.repo).resolve(req.base)
        ok = b"GOOD" in patch
        rows = [row(TEST, TestClass.FIXED if ok else TestClass.STILL_FAILING, Outcome.FAILED,
                    Outcome.PASSED if ok else Outcome.FAILED)]  # fmt: skip
        met = ExpectedTest(test_id=TEST, expected="fail_to_pass", base=Outcome.FAILED,
                           head=rows[0].head.outcome if rows[0].head else Outcome.ABSENT, met=ok)  # fmt: skip
        reason = "resolved: 1 FAIL_TO_PASS" if ok else f"not resolved: {TEST} (fail_to_pass)"
        ev = evidence(rows, ok=ok).model_copy(
            update={
                "reason": reason,
                "base": TreeRef(ref=req.base, commit=commit, tree=tree),
                "head": TreeRef(ref="base + test_patch + patch", commit=None, tree="9" * 40),
                "patch_sha256": sha256_bytes(patch),
                "test_patch_sha256": sha256_bytes(req.test_patch.read_bytes()),
                "resolution": Resolution(
                    resolved=ok, fail_to_pass=1, pass_to_pass=0, unmet=[] if ok else [TEST], tests=[met]
                ),
                "verifier_version": __version__,
            }
        )
        return ev.model_copy(update={"review_id": review_id(identity(ev.model_dump(mode="json")))})
