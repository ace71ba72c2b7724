"""A real `verifier serve` process on 127.0.0.1 for the tests: its configuration and token file
written to a folder, started as `python -m verifier serve --port 0`, ready once /healthz answers,
stopped with SIGTERM (the way an operator stops it), and checked to leave no container behind."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import httpx

from verifier.sandbox.hardening import LABEL_OWNER_PID

ROOT = Path(__file__).resolve().parents[2]
SLEEPY_SUITE = Path(__file__).resolve().parent / "sleepy_suite"
#: Starting (imports, the warm pools' first containers) on a machine busy with other tests.
START_TIMEOUT_S = 240.0


def make_token() -> str:
    return "t-" + secrets.token_urlsafe(24)


def tokens_toml(tokens: dict[str, tuple[str, dict[str, Any]]]) -> str:
    """A token file: name -> (token, settings)."""
    parts = []
    for name, (token, settings) in tokens.items():
        lines = [f'name = "{name}"', f'sha256 = "{hashlib.sha256(token.encode()).hexdigest()}"']
        for key, value in settings.items():
            rendered = str(value).lower() if isinstance(value, bool) else repr(value).replace("'", '"')
            lines.append(f"{key} = {rendered}")
        parts.append("[[tokens]]\n" + "\n".join(lines) + "\n")
    return "\n".join(parts)


@dataclass
class Served:
    folder: Path
    proc: subprocess.Popen[bytes]
    url: str
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def log(self) -> str:
        return (self.folder / "server.log").read_text(errors="replace")

    def client(self, token: str | None = None, **kwargs: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=kwargs.pop("timeout", 600.0), **kwargs)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stop(self, timeout: float = 120.0) -> int:
        """SIGTERM, then wait; returns the exit code. Fails if a container of it is left."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)
            raise AssertionError(f"the server did not stop within {timeout} s after SIGTERM") from None
        left = containers_of(self.proc.pid)
        assert left == [], f"the server left containers behind: {left}"
        return code


def containers_of(pid: int) -> list[str]:
    client = docker.from_env(timeout=60)
    try:
        return [c["Id"][:12] for c in client.api.containers(all=True, filters={"label": f"{LABEL_OWNER_PID}={pid}"})]
    finally:
        client.close()


Tokens = dict[str, tuple[str, dict[str, Any]]]


def start(
    folder: Path, config: str, tokens: Tokens, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
) -> Served:
    """Write the configuration (`tokens = "tokens.toml"` is added) and start the server (with
    `args` on its command line)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokens.toml").write_text(tokens_toml(tokens))
    (folder / "serve.toml").write_text('tokens = "tokens.toml"\n' + config)
    log = open(folder / "server.log", "wb")  # noqa: SIM115 - the server's, closed with the test's process
    proc = subprocess.Popen(
        [sys.executable, "-m", "verifier", "serve", "--config", str(folder / "serve.toml"), "--port", "0", *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )
    served = Served(folder, proc, url="", tokens={name: token for name, (token, _) in tokens.items()})
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", served.log)
        if found:
            served.url = found.group(1)
            try:
                if httpx.get(served.url + "/healthz", timeout=5).json()["status"] == "ok":
                    return served
            except (httpx.HTTPError, ValueError):
                pass
        time.sleep(0.2)
    proc.kill()
    proc.wait(30)
    raise AssertionError(f"the server did not come up:\n{served.log[-3000:]}")
