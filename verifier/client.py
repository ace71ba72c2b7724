"""A client of `verifier serve` (the serve extra: httpx): `Client` and `AsyncClient`.

    from verifier.client import Client

    with Client("http://127.0.0.1:8080", token) as client:
        ev = client.check(source, "find_duplicates")          # Evidence
        for line in client.batch([("a", source_a, "find_duplicates"), ...]):
            print(line.id, line.evidence.ok)                   # in the order they finish
        scores = client.rewards([("a", chat_answer, "humaneval/HumanEval/0")])  # [1.0 | 0.0 | None]

Answers the server asks to be retried are retried: 429 (rate, concurrency) and 503 (overloaded,
stopping) after their Retry-After, at most `retries` times and never waiting longer than
`max_wait_s` at once (a spent daily quota's Retry-After is hours: that raises at once). A batch
item that comes back `overloaded` is sent again in a later batch, as many times. Anything else
the server refuses raises `ServeError` with its status, code and reason.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

import httpx

from verifier.closing import Closing
from verifier.errors import VerifierError
from verifier.evidence import Evidence, Fault, Status
from verifier.serve.api import (
    BatchItem,
    BatchLine,
    CheckRequest,
    ExtractOptions,
    Health,
    InlineSuite,
    RunCodeRequest,
    RunCodeResponse,
    SuiteByName,
    SuiteInfo,
)

__all__ = ["AsyncClient", "Client", "ServeError", "reward"]

#: Statuses the server asks to be retried after their Retry-After (504: /run_code's overloaded).
RETRIED_STATUS = (429, 503, 504)
SuiteRef = str | SuiteByName | InlineSuite
#: A batch item: (id, candidate, suite), or a BatchItem.
ItemInput = tuple[str, str | Mapping[str, str], SuiteRef] | BatchItem


class ServeError(VerifierError):
    """The server refused a request (after any retries)."""

    def __init__(self, status: int, error: str, reason: str, retry_after: float | None = None) -> None:
        super().__init__(f"{status} {error}: {reason}")
        self.status = status
        self.error = error
        self.reason = reason
        self.retry_after = retry_after


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers["retry-after"])
    except (KeyError, ValueError):
        return None


def _error(response: httpx.Response) -> ServeError:
    try:
        body = response.json()
        error, reason = str(body.get("error", "")), str(body.get("reason", body))
    except ValueError:
        error, reason = "", response.text[:500]
    return ServeError(response.status_code, error or "error", reason, _retry_after(response))


def _wait(response: httpx.Response, attempt: int, retries: int, max_wait_s: float) -> float | None:
    """Seconds to wait before trying `response`'s request again, or None: not again."""
    if response.status_code not in RETRIED_STATUS or attempt >= retries:
        return None
    wait = _retry_after(response)
    wait = min(2.0**attempt, 30.0) if wait is None else wait
    return wait if wait <= max_wait_s else None


class _Retry:
    """The retry decisions of one request: `wait` after each refused answer."""

    def __init__(self, retries: int, max_wait_s: float) -> None:
        self.retries = retries
        self.max_wait_s = max_wait_s
        self.attempt = 0

    def wait(self, response: httpx.Response) -> float | None:
        """Seconds to wait before sending the request again, or None: `response` is the answer."""
        wait = _wait(response, self.attempt, self.retries, self.max_wait_s)
        self.attempt += 1
        return wait


def _item(value: ItemInput, extract: ExtractOptions | None = None) -> BatchItem:
    """A batch item; `extract` is given to the items that have none of their own."""
    if isinstance(value, BatchItem):
        return value if value.extract is not None or extract is None else value.model_copy(update={"extract": extract})
    item_id, candidate, suite = value
    source = dict(candidate) if isinstance(candidate, Mapping) else candidate
    return BatchItem(id=item_id, candidate=source, suite=suite, extract=extract)


def _extract(value: ExtractOptions | bool | None) -> ExtractOptions | None:
    if value is True:
        return ExtractOptions()
    return value or None


def _check_body(candidate: str | Mapping[str, str], suite: SuiteRef, extract: ExtractOptions | bool | None) -> str:
    source = dict(candidate) if isinstance(candidate, Mapping) else candidate
    return CheckRequest(candidate=source, suite=suite, extract=_extract(extract)).model_dump_json(exclude_none=True)


def reward(evidence: Evidence) -> float | None:
    """A check's reward for a trainer: 1.0 when it passed; 0.0 when the answer is at fault (wrong,
    crashed, too slow or big, a syntax error, no code in it: `fault` candidate or input); None
    when the verifier could not judge it (our fault or a busy host's): leave it out of the step,
    never punish the model for it."""
    if evidence.fault in (Fault.NONE, Fault.CANDIDATE, Fault.INPUT):
        return 1.0 if evidence.ok else 0.0
    return None


def _run_code_body(request: RunCodeRequest | Mapping[str, Any]) -> str:
    body = request if isinstance(request, RunCodeRequest) else RunCodeRequest.model_validate(dict(request))
    return body.model_dump_json()


def _run_code_answer(response: httpx.Response) -> RunCodeResponse:
    """SandboxFusion's answer (200, or 504: overloaded after the retries), or the refusal."""
    if response.status_code not in (200, 504):
        raise _error(response)
    return RunCodeResponse.model_validate_json(response.content)


def _batch_body(items: Sequence[BatchItem]) -> str:
    return json.dumps({"items": [item.model_dump(mode="json", exclude_none=True) for item in items]})


def _evidence(response: httpx.Response) -> Evidence:
    """The evidence a check answered (200, or 503 overloaded), or the refusal as ServeError."""
    if response.status_code not in (200, 503):
        raise _error(response)
    try:
        return Evidence.model_validate_json(response.content)
    except ValueError:
        raise _error(response) from None


def _answer(response: httpx.Response) -> bytes:
    """A 200 answer's body, or the refusal as ServeError."""
    if response.status_code != 200:
        raise _error(response)
    return response.content


#: The headers of a request with a JSON body.
_JSON = {"Content-Type": "application/json"}


_Transport = TypeVar("_Transport", httpx.BaseTransport, httpx.AsyncBaseTransport)
_Http = TypeVar("_Http", httpx.Client, httpx.AsyncClient)


class _Core(Generic[_Transport, _Http]):
    """What both clients share: their settings and their httpx client (only its I/O differs)."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 900.0,
        retries: int = 5,
        max_wait_s: float = 60.0,
        transport: _Transport | None = None,
    ) -> None:
        self.retries = retries
        self.max_wait_s = max_wait_s
        options = {"base_url": url.rstrip("/"), "headers": {"Authorization": f"Bearer {token}"}, "timeout": timeout}
        self.http: _Http = self._open(transport, options)

    def _open(self, transport: _Transport | None, options: dict[str, Any]) -> _Http:
        raise NotImplementedError

    def _retry(self) -> _Retry:
        return _Retry(self.retries, self.max_wait_s)


class _Scores:
    """`rewards`' bookkeeping: the items in their order, and one score per item as lines come."""

    def __init__(self, items: Iterable[ItemInput], extract: ExtractOptions | bool | None) -> None:
        self.items = [_item(i, _extract(extract)) for i in items]
        self._order = {item.id: n for n, item in enumerate(self.items)}
        self.scores: list[float | None] = [None] * len(self.items)

    def add(self, line: BatchLine) -> None:
        self.scores[self._order[line.id]] = reward(line.evidence)


class _Round:
    """One round of `batch`: which lines are given now, which items are sent again (overloaded,
    while retries are left), and the pause before the next round."""

    def __init__(self, pending: list[BatchItem], attempt: int, retries: int, max_wait_s: float) -> None:
        self.pending = pending
        self.again: list[BatchItem] = []
        self._by_id = {item.id: item for item in pending}
        self._retry = attempt < retries
        self.pause = min(2.0**attempt, max_wait_s)

    def give(self, line: BatchLine) -> bool:
        """True: give `line` now; False: its item is sent again."""
        if line.evidence.status is Status.OVERLOADED and self._retry:
            self.again.append(self._by_id[line.id])
            return False
        return True


def _rounds(items: Iterable[ItemInput], retries: int, max_wait_s: float) -> Iterator[_Round]:
    """The rounds of a batch: the next starts with the previous one's `again` (none: done)."""
    pending = [_item(i) for i in items]
    for attempt in range(retries + 1):
        if not pending:
            return
        current = _Round(pending, attempt, retries, max_wait_s)
        yield current
        pending = current.again


class Client(Closing, _Core[httpx.BaseTransport, httpx.Client]):
    """A synchronous client (one httpx connection pool; close it, or use `with`)."""

    def _open(self, transport: httpx.BaseTransport | None, options: dict[str, Any]) -> httpx.Client:
        return httpx.Client(transport=transport, **options)

    def close(self) -> None:
        self.http.close()

    def _request(self, method: str, path: str, body: str | None = None) -> httpx.Response:
        retry = self._retry()
        while True:
            response = self.http.request(method, path, content=body, headers=_JSON if body else None)
            wait = retry.wait(response)
            if wait is None:
                return response
            time.sleep(wait)

    def health(self) -> Health:
        return Health.model_validate_json(_answer(self.http.get("/healthz")))

    def suites(self) -> list[SuiteInfo]:
        response = self._request("GET", "/v1/suites")
        _answer(response)
        return [SuiteInfo.model_validate(s) for s in response.json()]

    def check(
        self, candidate: str | Mapping[str, str], suite: SuiteRef, *, extract: ExtractOptions | bool | None = None
    ) -> Evidence:
        """The evidence of one check (an overloaded one after the retries are spent). `extract`:
        the candidate is a model's answer; its code is checked (`ExtractOptions`; True: defaults)."""
        return _evidence(self._request("POST", "/v1/check", _check_body(candidate, suite, extract)))

    def evidence(self, evidence_id: str) -> Evidence:
        return Evidence.model_validate_json(_answer(self._request("GET", f"/v1/evidence/{evidence_id}")))

    def run_code(self, request: RunCodeRequest | Mapping[str, Any]) -> RunCodeResponse:
        """SandboxFusion's /run_code."""
        return _run_code_answer(self._request("POST", "/run_code", _run_code_body(request)))

    def rewards(
        self, items: Iterable[ItemInput], *, extract: ExtractOptions | bool | None = True
    ) -> list[float | None]:
        """One reward per item, in their order (`reward`), through one batch. By default each
        item's candidate is a model's answer whose code is taken out (`extract`)."""
        scores = _Scores(items, extract)
        for line in self.batch(scores.items):
            scores.add(line)
        return scores.scores

    def batch(self, items: Iterable[ItemInput]) -> Iterator[BatchLine]:
        """Each item's evidence as it finishes. Items that come back overloaded are sent again
        (in a later batch, after a pause) up to `retries` times; then their last evidence is given."""
        for batch_round in _rounds(items, self.retries, self.max_wait_s):
            for line in self._batch_once(batch_round.pending):
                if batch_round.give(line):
                    yield line
            if batch_round.again:
                time.sleep(batch_round.pause)

    def _batch_once(self, items: Sequence[BatchItem]) -> Iterator[BatchLine]:
        body = _batch_body(items)
        retry = self._retry()
        while True:
            with self.http.stream("POST", "/v1/batch", content=body, headers=_JSON) as response:
                if response.status_code == 200:
                    for text in response.iter_lines():
                        if text.strip():
                            yield BatchLine.model_validate_json(text)
                    return
                response.read()
                wait = retry.wait(response)
                if wait is None:
                    raise _error(response)
            time.sleep(wait)


class AsyncClient(_Core[httpx.AsyncBaseTransport, httpx.AsyncClient]):
    """The same, for asyncio (one httpx connection pool; `aclose` it, or use `async with`)."""

    def _open(self, transport: httpx.AsyncBaseTransport | None, options: dict[str, Any]) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=transport, **options)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def _request(self, method: str, path: str, body: str | None = None) -> httpx.Response:
        retry = self._retry()
        while True:
            response = await self.http.request(method, path, content=body, headers=_JSON if body else None)
            wait = retry.wait(response)
            if wait is None:
                return response
            await asyncio.sleep(wait)

    async def check(
        self, candidate: str | Mapping[str, str], suite: SuiteRef, *, extract: ExtractOptions | bool | None = None
    ) -> Evidence:
        """As `Client.check`."""
        return _evidence(await self._request("POST", "/v1/check", _check_body(candidate, suite, extract)))

    async def run_code(self, request: RunCodeRequest | Mapping[str, Any]) -> RunCodeResponse:
        """As `Client.run_code`."""
        return _run_code_answer(await self._request("POST", "/run_code", _run_code_body(request)))

    async def rewards(
        self, items: Iterable[ItemInput], *, extract: ExtractOptions | bool | None = True
    ) -> list[float | None]:
        """As `Client.rewards`."""
        scores = _Scores(items, extract)
        async for line in self.batch(scores.items):
            scores.add(line)
        return scores.scores

    async def evidence(self, evidence_id: str) -> Evidence:
        return Evidence.model_validate_json(_answer(await self._request("GET", f"/v1/evidence/{evidence_id}")))

    async def batch(self, items: Iterable[ItemInput]) -> AsyncIterator[BatchLine]:
        """As `Client.batch`."""
        for batch_round in _rounds(items, self.retries, self.max_wait_s):
            async for line in self._batch_once(batch_round.pending):
                if batch_round.give(line):
                    yield line
            if batch_round.again:
                await asyncio.sleep(batch_round.pause)

    async def _batch_once(self, items: Sequence[BatchItem]) -> AsyncIterator[BatchLine]:
        body = _batch_body(items)
        retry = self._retry()
        while True:
            async with self.http.stream("POST", "/v1/batch", content=body, headers=_JSON) as response:
                if response.status_code == 200:
                    async for text in response.aiter_lines():
                        if text.strip():
                            yield BatchLine.model_validate_json(text)
                    return
                await response.aread()
                wait = retry.wait(response)
                if wait is None:
                    raise _error(response)
            await asyncio.sleep(wait)
