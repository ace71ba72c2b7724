"""For suites: many calls of one candidate function at the cost of a few (`each`).

A test that calls a candidate function on many inputs pays one round trip between its process
and the candidate's per call (about 0.1 ms here). `each` sends the calls in chunks (1, 2, 4,
... up to 64 a request, `proxy.EACH_CHUNK`), and the candidate process answers every call of a
chunk in order before the test looks at the first answer. Everything else is as for one call at
a time: each answer crosses and is checked as a call's answer does, each call has the call
limit, and what a call raises (or an abort of it: a timeout, a crash) is raised at its place in
the iteration, after the answers before it.

What differs, and why `each` is a function a suite chooses rather than what every call does:
- the arguments cross as copies, and a call's changes to them are not carried back;
- a chunk's later calls may already have run when the test stops at an earlier answer (a
  stateful candidate is then ahead of where single calls would have left it; its process is
  replaced when a chunk ended where the candidate could not know it had);
- an answer that holds a candidate object (a handle) ends its chunk: the next call is sent only
  when the test asks for the next answer.

Outside the sandbox (plain pytest on the host, where the suite imports the candidate itself)
`each` is a plain loop of calls; a suite that must run under both imports it with that fallback:

    try:
        from verifier_runner.calls import each
    except ImportError:
        def each(function, arguments):  # as in the sandbox: the calls get copies
            return (function(*copy.deepcopy(args)) for args in arguments)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .proxy import forwarded

__tracebackhide__ = True


def each(function: Callable[..., Any], arguments: Iterable[Iterable[Any]]) -> Iterator[Any]:
    """`function(*args)` for each `args` of `arguments`, in order, as an iterator of answers.
    A candidate module's function is called in chunks (above); any other callable one call at a
    time, when its answer is asked for."""
    found = forwarded(function)
    listed = [tuple(args) for args in arguments]
    if found is None:
        return (function(*args) for args in listed)
    session, module, name = found
    return session.call_each(module, name, listed)
