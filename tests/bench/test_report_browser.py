"""The bench report in a real browser: headless Chromium (the system's, driven by Playwright)
opens the page of a run with a hostile candidate, from a file, as a user would. It must load
with no console error (a Content-Security-Policy refusal is one), no page error, no dialog
(the hostile `alert` never runs), no request beyond the page itself, and every plot drawn. The
screenshot is kept in the test's tmp folder (its path is printed).

The browser is a requirement like the Docker engine: without one the test fails and names the
fix (scripts/ensure-chromium.sh, which scripts/test.sh runs); VERIFIER_SKIP_BROWSER=1 skips it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.bench.report_files import HOSTILE, write_run
from verifier.bench.report import write_report

#: Bounds against a hung browser, never a speed (the suite runs beside CPU hogs).
BROWSER_TIMEOUT_MS = 120_000


def chromium() -> str:
    """The Chromium to drive: VERIFIER_CHROMIUM, or chromium on PATH; fails the test (never
    skips it) when there is none, unless VERIFIER_SKIP_BROWSER=1."""
    if os.environ.get("VERIFIER_SKIP_BROWSER") == "1":
        pytest.skip("VERIFIER_SKIP_BROWSER=1")
    found = os.environ.get("VERIFIER_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail(
            "no Chromium for the report's browser test: run scripts/ensure-chromium.sh (apt-get install chromium), "
            "set VERIFIER_CHROMIUM to one, or VERIFIER_SKIP_BROWSER=1 to skip it",
            pytrace=False,
        )
    return found


def test_the_report_opens_in_headless_chromium_cleanly(tmp_path: Path) -> None:
    executable = chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the report's browser test needs Playwright: pip install -e '.[dev]'", pytrace=False)
    files = write_report(write_run(tmp_path, plus=True), tmp_path / "report", ks=[1, 2])
    url = files.html.resolve().as_uri()
    console: list[str] = []
    errors: list[str] = []
    dialogs: list[str] = []
    requests: list[str] = []
    shot = tmp_path / "report-screenshot.png"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, timeout=BROWSER_TIMEOUT_MS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(BROWSER_TIMEOUT_MS)
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(url, wait_until="load")
            drawn = page.evaluate("Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)")
            scripts = page.evaluate("document.scripts.length")
            shown = page.locator("pre").all_inner_texts()
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    print(f"screenshot: {shot}")
    assert [m for m in console if m.startswith(("error", "warning"))] == []
    assert errors == [] and dialogs == [] and scripts == 0
    assert requests == [url]  # the page alone: its plots are data: images, nothing is fetched
    assert drawn == [True] * 5
    assert any(HOSTILE in text for text in shown)  # the hostile text is on screen, as text
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
