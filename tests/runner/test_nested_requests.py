"""A real candidate process (candidate.serve, forked) and the trusted side's real session, without a
sandbox: answers whose rebuilding asks the candidate again (issue 32 §2).

Rebuilding a dict keyed by candidate objects hashes them, and an ABC's registry asks `issubclass`
of the candidate classes registered with it: both are requests made while the call that got the
answer still holds the session's lock, which waited for itself for ever before it was re-entrant
(the registration of candidate classes with the ABCs was reverted for that hang). Each question
runs in a thread bounded by HANG_S: a bound against a hang, not a measure of speed.
"""

from __future__ import annotations

import collections.abc
import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from verifier.runner import candidate, proxy

HANG_S = 60.0

SOLUTION = """
import collections.abc


class Key:
    def __init__(self, n):
        self.n = n

    def __hash__(self):
        return self.n


def keyed():
    return {Key(1): "a", Key(2): "b"}


def members():
    return {Key(3)}


class Table(collections.abc.Mapping):
    def __init__(self):
        self.d = {}

    def __getitem__(self, k):
        return self.d[k]

    def __iter__(self):
        return iter(self.d)

    def __len__(self):
        return len(self.d)


class Row(Table):
    pass


class Plain:
    pass


def kinds():
    return [Table, Row, Plain]
"""


@pytest.fixture
def solution(tmp_path: Path) -> Iterator[proxy.CandidateModule]:
    (tmp_path / "solution.py").write_text(SOLUTION)
    mine, theirs = socket.socketpair()
    out_r, out_w = os.pipe()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the candidate process
        try:
            mine.close()
            candidate.serve(theirs.fileno(), out_w, ["solution"], str(tmp_path), ready_w)
        finally:
            os._exit(0)
    theirs.close()
    os.close(out_w)
    os.close(ready_w)
    ctl = socket.socket()
    session = proxy.CandidateSession(
        ctl, call_timeout=HANG_S, budget=10 * HANG_S, output_cap=1 << 20, reply_limit=1 << 24
    )
    session.output.drain(out_r)
    session.sock, session.pid, session.generation = mine, pid, 1
    try:
        session.modules = session._receive("importing the candidate")["modules"]
        yield proxy.CandidateModule("solution", session)
    finally:
        os.close(ready_r)  # open until the child said it is ready (a write to a closed pipe kills it)
        mine.close()
        ctl.close()
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def _bounded(question: Callable[[], Any]) -> Any:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["answer"] = question()
        except BaseException as exc:
            box["raised"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_S)
    assert not thread.is_alive(), "the question waited for itself (a hang)"
    if "raised" in box:
        raise box["raised"]
    return box["answer"]


def test_an_answer_keyed_by_candidate_objects_is_rebuilt(solution: Any) -> None:
    keyed = _bounded(solution.keyed)
    assert sorted(k.n for k in keyed) == [1, 2] and sorted(keyed.values()) == ["a", "b"]
    assert [m.n for m in _bounded(solution.members)] == [3]


def test_candidate_classes_answer_issubclass_as_they_do(solution: Any) -> None:
    mapping, sized = collections.abc.Mapping, collections.abc.Sized
    assert _bounded(lambda: issubclass(solution.Table, mapping) and issubclass(solution.Table, sized))
    assert not _bounded(lambda: issubclass(solution.Table, collections.abc.MutableMapping))
    table, row, plain = _bounded(solution.kinds)
    assert _bounded(lambda: issubclass(row, mapping) and issubclass(row, table) and not issubclass(table, row))
    assert not _bounded(lambda: issubclass(plain, mapping))


def test_a_class_of_an_earlier_process_is_never_asked(solution: Any) -> None:
    """An ABC's registry keeps the classes of earlier tests' candidate processes; asking about a
    class of the current process must not reach them (a StaleHandle in an innocent test)."""
    old_table, old_row, _ = _bounded(solution.kinds)
    assert _bounded(lambda: issubclass(old_row, collections.abc.Mapping))
    session = proxy.handle_of(old_table)._verifier_session  # type: ignore[union-attr]
    session.generation += 1  # as if the next test's process served the calls now
    session.known.clear()
    assert not _bounded(lambda: issubclass(solution.Table, old_table))
    assert _bounded(lambda: issubclass(solution.Table, collections.abc.Mapping))
