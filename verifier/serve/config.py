"""The server's configuration file (TOML) and the suites it registers by name.

    host = "127.0.0.1"            # bind address (TLS and public exposure: a reverse proxy)
    port = 8080
    tokens = "tokens.toml"        # the token file (verifier.serve.tokens), relative to this file
    policy = "reuse"              # reuse | fresh | cold (Verifier.with_policy)
    queue_wait_s = 60             # a check waits this long for a machine-wide slot, then: overloaded (503)
    [pool]                        # PoolConfig: size, max_uses, preload (the policy is `policy` above)
    [limits]                      # Limits of every check (a suite's [limits] still apply)
    [http]                        # body, header and time bounds of a request (HttpConfig)
    [run_code]                    # SandboxFusion's /run_code (RunCodeConfig)
    [suites]                      # name = "folder": a suite folder registered under that name
    [suite_roots]                 # prefix = "folder": every folder below it holding a suite.toml,
                                  # registered as prefix/<its path below the folder>

Every key is validated when the file loads (unknown keys refused, errors name the key).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from verifier.errors import InvalidInput, VerifierError
from verifier.limits import Limits, MiB, PoolConfig, RunPolicy
from verifier.sandbox.admission import default_slots
from verifier.suite import MANIFEST, Suite, load_suite

#: What a registered suite may be called (a token's `suites` patterns match these names).
SUITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]{0,499}$")


class ConfigError(VerifierError, ValueError):
    """The configuration (or a suite it names) cannot be used; the message names the key."""


class HttpConfig(BaseModel):
    """How much a request may send, and how slowly, before it is cut off. A request holds no
    sandbox before its body is complete and checked, so these bound only memory and sockets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_body_bytes: int = Field(16 * MiB, ge=1024, description="Largest request body (413 beyond).")
    max_body_bytes_held_per_token: int | None = Field(
        None,
        ge=1024,
        description="Bytes of request bodies one token's principal holds at once, over all its requests in "
        "progress (each body is held from its first byte until its request is answered): past it, 429 and "
        "closed. At least max_body_bytes (default: 4 times it).",
    )
    max_body_bytes_held: int | None = Field(
        None,
        ge=1024,
        description="The same, of every principal together: past it, 503 and closed. At least "
        "max_body_bytes_held_per_token (default: 16 times max_body_bytes).",
    )
    max_header_bytes: int = Field(
        16 * 1024, ge=1024, description="Largest request line + headers: 431 beyond (counted as they arrive)."
    )
    header_timeout_s: float = Field(
        10.0, gt=0, description="From a connection's first byte (or its previous answer) to its complete headers."
    )
    body_timeout_s: float = Field(30.0, gt=0, description="From the complete headers to the complete body (408).")
    keep_alive_s: float = Field(5.0, gt=0, description="An idle connection is closed after this (uvicorn).")
    send_timeout_s: float | None = Field(
        None,
        gt=0,
        description="A client that takes none of an answer for this long is cut off, and a closing connection "
        "whose client does not take its last bytes is aborted after it (default: body_timeout_s).",
    )
    max_connections: int = Field(1000, ge=2, description="Open connections at once; more are answered 503.")
    unauthenticated_per_peer: int | None = Field(
        None,
        ge=1,
        description="Connections of one peer address that no token has authenticated yet; more are answered "
        "429 and closed. Smaller than max_connections (default: a quarter of it).",
    )

    @property
    def send_timeout(self) -> float:
        return self.send_timeout_s if self.send_timeout_s is not None else self.body_timeout_s

    @property
    def body_held_per_token(self) -> int:
        if self.max_body_bytes_held_per_token is not None:
            return self.max_body_bytes_held_per_token
        return 4 * self.max_body_bytes

    @property
    def body_held(self) -> int:
        if self.max_body_bytes_held is not None:
            return self.max_body_bytes_held
        return max(16 * self.max_body_bytes, self.body_held_per_token)

    @property
    def unauthenticated_budget(self) -> int:
        if self.unauthenticated_per_peer is not None:
            return self.unauthenticated_per_peer
        return max(1, self.max_connections // 4)

    @model_validator(mode="after")
    def _budget_under_the_whole(self) -> HttpConfig:
        if self.unauthenticated_per_peer is not None and self.unauthenticated_per_peer >= self.max_connections:
            raise ValueError(
                "unauthenticated_per_peer must be smaller than max_connections (one address without a token "
                "must never hold the whole server)"
            )
        if self.body_held_per_token < self.max_body_bytes:
            raise ValueError("max_body_bytes_held_per_token must be at least max_body_bytes (one body must fit)")
        if self.body_held < self.body_held_per_token:
            raise ValueError("max_body_bytes_held must be at least max_body_bytes_held_per_token")
        return self


class RunCodeConfig(BaseModel):
    """SandboxFusion's `/run_code`: programs on stdin/stdout (Python and the languages of
    docs/programs.md), on a pool of their own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    max_memory_mb: int = Field(
        1024, ge=16, description="Largest memory_limit_MB a request may ask for (also what -1 means)."
    )
    max_run_timeout_s: float = Field(60.0, gt=0, le=600, description="Largest run_timeout a request may ask for.")
    max_compile_timeout_s: float = Field(
        60.0, gt=0, le=600, description="Largest compile_timeout a request may ask for (compiled languages)."
    )
    output_bytes: int = Field(
        4 * MiB,
        ge=64 * 1024,
        description="The sandbox's output limit; a program may write 3/8 of it to stdout (the rest is the "
        "result's room for it, whatever its characters) and as much to stderr.",
    )
    pool_size: int = Field(
        default_factory=default_slots,
        ge=1,
        description="Warm containers kept for /run_code, which is also how many programs run at once (each "
        "still queues for a machine-wide slot). Default: the machine's slots (VERIFIER_MAX_SANDBOXES, else "
        "the core count), so /run_code runs as many programs at once as every other check may.",
    )


class ServeConfig(BaseModel):
    """`verifier serve --config FILE`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field("127.0.0.1", description="Bind address; 127.0.0.1 unless a reverse proxy needs another.")
    port: int = Field(8080, ge=0, le=65535)
    tokens: Path = Field(description="The token file (verifier.serve.tokens).")
    policy: RunPolicy = Field("reuse", description="How checks run: reuse, fresh or cold (Verifier.with_policy).")
    pool: PoolConfig = Field(PoolConfig(), description="The warm pool's settings; its policy is `policy`.")
    limits: Limits = Field(Limits(), description="Limits of every check (a suite's [limits] apply on top).")
    queue_wait_s: float = Field(
        60.0,
        gt=0,
        le=3600,
        description="How long a check waits for a machine-wide sandbox slot before it is answered overloaded (503).",
    )
    max_in_flight: int = Field(256, ge=1, le=4096, description="Checks accepted at once; more: overloaded (503).")
    retries: int = Field(1, ge=0, le=5, description="Reruns of a check that ended infra_error (our fault).")
    retry_after_s: int = Field(2, ge=1, le=3600, description="Retry-After of an overloaded answer.")
    evidence_kept: int = Field(100_000, ge=0, description="Evidence records kept for GET /v1/evidence (all tokens).")
    evidence_kept_bytes: int = Field(
        256 * MiB, ge=0, description="Bytes of evidence kept for GET /v1/evidence, all tokens together."
    )
    evidence_kept_bytes_per_token: int = Field(
        64 * MiB, ge=0, description="Bytes of evidence kept for GET /v1/evidence, of one token's principal."
    )
    evidence_output_chars: int = Field(
        64 * 1024,
        ge=1024,
        description="A kept evidence's candidate-written texts (a program's stdout, stderr) are cut at this, "
        "with the whole text's length and SHA-256.",
    )
    answer_bytes: int = Field(
        256 * MiB,
        ge=64 * 1024,
        description="Bytes of answers made and not yet taken by their clients (batch lines, answers being sent), "
        "in all: past it, checks are answered 503.",
    )
    answer_bytes_per_token: int = Field(
        32 * MiB,
        ge=64 * 1024,
        description="The same, of one token's principal: past it, its batches wait and its checks are answered 429.",
    )
    shutdown_s: float = Field(30.0, ge=0, description="On SIGTERM: how long in-flight requests may take to finish.")
    token_reload_s: float = Field(1.0, gt=0, description="How often the token file is checked for changes.")
    inline_pool_size: int = Field(
        default_factory=default_slots,
        ge=1,
        description="Warm containers kept for inline suites (fresh policy), also how many run at once; "
        "default: the machine's slots.",
    )
    http: HttpConfig = HttpConfig()
    run_code: RunCodeConfig = RunCodeConfig()
    suites: dict[str, Path] = Field({}, description="name -> suite folder.")
    suite_roots: dict[str, Path] = Field({}, description="prefix -> folder of suite folders (each with suite.toml).")

    @model_validator(mode="before")
    @classmethod
    def _pool_size(cls, data: Any) -> Any:
        """A pool's size is also how many of its checks run at once: by default the machine's
        slots (as /run_code's and inline suites'), not PoolConfig's library default of 2."""
        if isinstance(data, dict):
            pool = data.get("pool", {})
            if isinstance(pool, dict) and "size" not in pool:
                data = {**data, "pool": {**pool, "size": default_slots()}}
        return data

    @field_validator("suites", "suite_roots")
    @classmethod
    def _names(cls, value: dict[str, Path]) -> dict[str, Path]:
        for name in value:
            if not SUITE_NAME.match(name):
                raise ValueError(f"{name!r} is not a suite name (letters, digits and ._/+- , at most 500)")
        return value


def _explain(exc: ValidationError, where: str) -> str:
    first = exc.errors()[0]
    key = ".".join(str(part) for part in first["loc"])
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        return f"{where}: unknown key {key!r}"
    return f"{where}: {key}: {msg}"


def load_config(path: Path) -> ServeConfig:
    """The configuration in `path`, its relative paths resolved against its folder. Raises
    ConfigError naming the file and the key."""
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    if isinstance(raw.get("pool"), dict) and "policy" in raw["pool"]:
        raise ConfigError(f"{path}: pool.policy: set the top-level policy instead (reuse, fresh or cold)")
    try:
        config = ServeConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, str(path))) from None
    base = path.resolve().parent
    return config.model_copy(
        update={
            "tokens": base / config.tokens,
            "suites": {name: base / folder for name, folder in config.suites.items()},
            "suite_roots": {name: base / folder for name, folder in config.suite_roots.items()},
        }
    )


def load_suites(config: ServeConfig) -> dict[str, Suite]:
    """Every suite the configuration registers, by name, each loaded and validated once.
    Raises ConfigError naming the suite that cannot be used."""
    found: dict[str, Suite] = {}

    def add(name: str, folder: Path) -> None:
        if name in found:
            raise ConfigError(f"suite {name!r} is registered twice")
        if not SUITE_NAME.match(name):
            raise ConfigError(f"suite folder {folder} would be registered as {name!r}, which is not a suite name")
        try:
            found[name] = load_suite(folder)
        except InvalidInput as exc:
            raise ConfigError(f"suite {name!r}: {exc}") from None

    for name, folder in config.suites.items():
        add(name, folder)
    for prefix, root in config.suite_roots.items():
        if not root.is_dir():
            raise ConfigError(f"suite_roots.{prefix}: {root} is not a folder")
        for manifest in sorted(root.rglob(MANIFEST)):
            below = manifest.parent.relative_to(root).as_posix()
            add(prefix if below == "." else f"{prefix}/{below}", manifest.parent)
    return found
