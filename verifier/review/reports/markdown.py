"""One PR comment: the verdict first, then what a reviewer must see, then the hashes.

Always under `MAX_CHARS` however large the suite: lists are cut with a count of what was
left out (the JSON and SARIF reports hold everything). Repository-controlled text (test ids,
messages, failure excerpts) only appears inside code spans and fences, made visible by
`verifier.text`, so it cannot format the comment, mention anyone or drive a terminal.
"""

from __future__ import annotations

import re

from verifier.review.review_evidence import ReviewEvidence, TestClass, TestRow
from verifier.text import one_line, visible

#: GitHub refuses comments over 65,536 characters; stay well under.
MAX_CHARS = 60_000
EXCERPT_CHARS = 700
EXCERPT_LINES = 12
MAX_EXCERPTS = 15


def code(text: str, limit: int = 200) -> str:
    """`text` as one inline code span, whatever backticks it holds."""
    s = one_line(text, limit)
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or longest else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def block(text: str) -> str:
    """`text` (its last lines) as a fenced block that no backtick run inside can close."""
    kept: list[str] = []
    size = 0
    for line in reversed(visible(text).rstrip().splitlines()[-EXCERPT_LINES:]):
        if kept and size + len(line) + 1 > EXCERPT_CHARS:
            break
        kept.append(line[:EXCERPT_CHARS])
        size += len(line) + 1
    body = "\n".join(reversed(kept))
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}\n{fence}"


def _outcomes(row: TestRow) -> str:
    b = row.base.outcome.value if row.base else "not run"
    h = row.head.outcome.value if row.head else "not run"
    text = f"base {b} → head {h}"
    if row.base_version is not None:
        v = row.base_version
        text += f" (its base version: base {v.on_base.outcome.value} → head {v.on_head.outcome.value})"
    return text


def _failure_text(row: TestRow) -> str:
    if row.classification is TestClass.REWRITTEN and row.base_version is not None:
        return row.base_version.on_head.excerpt_untrusted or row.base_version.on_head.message_untrusted
    side = row.head if row.head and row.head.outcome.value in ("failed", "error") else row.base
    if side is None:
        return ""
    return side.excerpt_untrusted or side.message_untrusted


class _Budget:
    def __init__(self, limit: int) -> None:
        self.left = limit

    def take(self, text: str) -> bool:
        if len(text) + 1 > self.left:
            return False
        self.left -= len(text) + 1
        return True


def _section(title: str, rows: list[TestRow], budget: _Budget, *, excerpts: int = 0, why: bool = True) -> list[str]:
    if not rows:
        return []
    out = [f"### {title} ({len(rows)})", ""]
    if not budget.take("\n".join(out)):
        return []
    tail_room = 120
    for shown, row in enumerate(rows):
        item = f"- {code(row.test_id)} — {_outcomes(row)}"
        if why and row.note:
            item += f"; {row.note}"
        if shown < excerpts:
            text = _failure_text(row)
            if text:
                item += "\n\n" + "\n".join("  " + ln for ln in block(text).splitlines()) + "\n"
        if budget.left - tail_room < len(item) + 1 or not budget.take(item):
            rest = len(rows) - shown
            note = f"- … and {rest} more (the JSON and SARIF reports list every test)"
            budget.take(note)
            out.append(note)
            break
        out.append(item)
    out.append("")
    return out


def _listed(ids: list[str], shown: int = 10) -> str:
    """The first `shown` test ids as code spans, then how many more."""
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(code(t, 120) for t in ids[:shown]) + more


def _callouts(ev: ReviewEvidence) -> list[str]:
    """The warnings above the table: rewritten or edited judges, unmet spec, infrastructure, incomplete runs."""
    callouts: list[str] = []
    rewritten = [r.test_id for r in ev.tests if r.classification is TestClass.REWRITTEN]
    if rewritten:
        callouts.append(
            f"> [!CAUTION]\n> **This change rewrites the tests of code it changed:** the base's own versions of "
            f"{len(rewritten)} test(s) pass on the base code and not on the head code, and the change edits, removes "
            f"or reaches them through its other test-side edits: {_listed(rewritten)}. Either the change broke "
            "them and hid it, or it changed behaviour on purpose: a human decides."
        )
    to_pass = [r.test_id for r in ev.tests if r.classification is TestClass.EDITED_TO_PASS]
    if to_pass:
        callouts.append(
            f"> [!WARNING]\n> **This change edits its own judge:** {len(to_pass)} test(s) it edits went from "
            f"failing to passing: {_listed(to_pass)}. They do not count as fixed. Review them, or run "
            "`verifier review --tests base` to judge the change with the base's tests."
        )
    if ev.resolution is not None and ev.resolution.unmet:
        unmet = [e for e in ev.resolution.tests if not e.met]
        items = ", ".join(f"{code(e.test_id, 120)} ({e.expected}: {e.base.value} → {e.head.value})" for e in unmet[:10])
        more = f" and {len(unmet) - 10} more" if len(unmet) > 10 else ""
        callouts.append(f"> [!CAUTION]\n> **Not resolved: listed tests that did not meet the spec:** {items}{more}")
    if ev.test_infrastructure_changes:
        items = ", ".join(code(t, 120) for t in ev.test_infrastructure_changes[:10])
        callouts.append(f"> [!NOTE]\n> **The change edits test infrastructure:** {items}")
    for run in ev.runs:
        if not run.complete:
            callouts.append(f"> [!CAUTION]\n> **The {run.side} run did not complete:** {one_line(run.stopped, 300)}")
    return callouts


def render(ev: ReviewEvidence, limit: int = MAX_CHARS) -> str:
    """The review as one markdown comment of at most `limit` characters."""
    c = ev.counts
    mark = "✅" if ev.ok else "❌"
    title = ("resolved" if ev.ok else "NOT RESOLVED") if ev.resolution else ("no regressions" if ev.ok else "NOT OK")
    head = [
        f"## {mark} verifier review: {title}",
        "",
        f"**{one_line(ev.reason, 400)}**",
        "",
    ]
    callouts = _callouts(ev)
    summary = (
        "| broken | rewritten | fixed | added | edited to pass | still failing | still passing | flaky | error "
        "| missing | skipped | removed |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        f"| {c.broken} | {c.rewritten} | {c.fixed} | {c.added} | {c.edited_to_pass} | {c.still_failing} "
        f"| {c.still_passing} | {c.flaky} | {c.error} | {c.missing} | {c.skipped} | {c.removed} |"
    )
    mode = "the head's tests on both sides" if ev.tests_mode == "head" else "the base's tests (+ tests the change adds)"
    summary += (
        f"\n\nJudged by {mode}, in a sandbox with no network; the code under test shares a process "
        "with its tests (`isolation: in-process`)."
    )
    footer = _footer(ev)
    fixed_parts = [*head, *[x + "\n" for x in callouts], summary, ""]
    budget = _Budget(limit - len("\n".join(fixed_parts)) - len(footer) - 200)

    def rows(*classes: TestClass, blocking: bool | None = None) -> list[TestRow]:
        return [r for r in ev.tests if r.classification in classes and (blocking is None or r.blocking == blocking)]

    body: list[str] = []
    body += _section("Regressions", rows(TestClass.BROKEN), budget, excerpts=MAX_EXCERPTS)
    body += _section(
        "Tests the change rewrote or removed (their base versions fail on its code)",
        rows(TestClass.REWRITTEN),
        budget,
        excerpts=MAX_EXCERPTS,
    )
    named = (TestClass.BROKEN, TestClass.REWRITTEN)
    new_fail = [r for r in ev.tests if r.blocking and r.classification not in named]
    body += _section("New failures, errors and missing tests", new_fail, budget, excerpts=MAX_EXCERPTS)
    body += _section("Tests the change edited that now pass", rows(TestClass.EDITED_TO_PASS), budget)
    body += _section("Fixed", rows(TestClass.FIXED), budget)
    body += _section("Flaky", rows(TestClass.FLAKY), budget)
    edited = [r for r in ev.tests if r.provenance.value == "edited" and r.classification != TestClass.EDITED_TO_PASS]
    body += _section("Other tests the change edited", edited, budget, why=False)
    body += _section("Added (passing or skipped)", rows(TestClass.ADDED, blocking=False), budget)
    body += _section("Removed", rows(TestClass.REMOVED), budget, why=False)
    still = rows(TestClass.STILL_FAILING, blocking=False)
    body += _section("Still failing (not caused by this change)", still, budget, why=False)
    body += _section("Errors on both sides", rows(TestClass.ERROR, blocking=False), budget, why=False)
    text = "\n".join([*fixed_parts, *body, footer]).rstrip() + "\n"
    if len(text) > limit:  # cannot happen with the budget above; never post an over-long comment
        text = text[: limit - 40].rsplit("\n", 1)[0] + "\n\n… (cut to fit one comment)\n"
    return text


def _footer(ev: ReviewEvidence) -> str:
    def short(s: str | None) -> str:
        return f"`{s[:12]}`" if s else "—"

    lines = [
        "<details><summary>Evidence</summary>",
        "",
        f"- review id: `{ev.review_id}`",
        f"- base: {code(ev.base.ref, 80)} commit {short(ev.base.commit)} tree `{ev.base.tree}`",
        f"- head: {code(ev.head.ref, 80)} commit {short(ev.head.commit)} tree `{ev.head.tree}`",
    ]
    if ev.patch_sha256:
        lines.append(f"- patch sha256: `{ev.patch_sha256}`")
    lines.append(f"- sandbox image: `{ev.sandbox_image_id}`")
    for run in ev.runs:
        env = run.environment
        pkgs = f"{len(env.packages)} packages" if env.requirements else "no declared dependencies"
        if env.sources:  # where the requirements were declared (file names come from the repository)
            pkgs += " from " + ", ".join(code(s, 80) for s in env.sources[:6])
            pkgs += f" and {len(env.sources) - 6} more" if len(env.sources) > 6 else ""
        lines.append(
            f"- {run.side} run: tree `{run.tree}`, {run.collected} collected, environment `{env.digest[:16]}` "
            f"({pkgs}), {run.duration_s:.1f} s"
        )
    lim = ev.limits
    lines.append(
        f"- limits: {lim.timeout_s:g} s, {lim.memory_bytes // 1024**2} MiB, {lim.cpus:g} CPU, no network; "
        f"tests mode `{ev.tests_mode}`, isolation `{ev.isolation}`; verifier {ev.verifier_version}"
    )
    lines += ["", "</details>"]
    return "\n".join(lines)
