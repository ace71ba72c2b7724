"""Bearer tokens: who may use the server, and for what.

The token file (TOML) holds no token, only each token's SHA-256 (hex, of its UTF-8 bytes), so a
leaked file lets nobody in:

    [[tokens]]
    name = "trainer-a"                 # the principal: quotas and evidence belong to it
    sha256 = ["<hex>", "<hex>"]        # one hash, or several (rotation: old and new side by side)
    concurrency = 8                    # checks at once (queued or running)
    rate_per_s = 50.0                  # sustained checks per second ...
    burst = 100                        # ... with this many at once
    daily_quota = 100000               # checks per UTC day
    suites = ["find_duplicates", "humaneval/*"]   # names (shell patterns) it may check against
    inline_suites = false              # may it send its own suites (trusted code: fresh containers)
    run_code = false                   # may it use /run_code

Make a token and its hash: `python -c "import secrets; print(secrets.token_urlsafe(32))"`, then
`printf %s "$TOKEN" | sha256sum`. The file is read again when it changes (checked every
`token_reload_s`) or on SIGHUP; a file that does not validate is not taken (the old one stays,
and the error is logged without any token).
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from verifier.errors import VerifierError

#: What a token may look like (it travels in URLs too): URL-safe characters, 16 to 256 of them.
TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9._~-]{16,256}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def token_hash(token: str) -> str:
    """The SHA-256 (hex) a token file stores for `token`."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenSpec(BaseModel):
    """One principal of the token file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$")
    sha256: list[str] = Field(min_length=1, description="SHA-256 (hex) of each of its tokens.")
    concurrency: int = Field(4, ge=1, le=4096)
    rate_per_s: float = Field(20.0, gt=0)
    burst: int = Field(50, ge=1)
    daily_quota: int = Field(10_000, ge=0)
    suites: list[str] = Field([], description="Shell patterns of the suite names it may use.")
    inline_suites: bool = False
    run_code: bool = False

    @field_validator("sha256", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("sha256")
    @classmethod
    def _hex(cls, value: list[str]) -> list[str]:
        for digest in value:
            if not _HEX64.match(digest):
                raise ValueError("each sha256 is 64 lower-case hex digits (printf %s TOKEN | sha256sum)")
        return value

    def may_use(self, suite: str) -> bool:
        return any(fnmatch.fnmatchcase(suite, pattern) for pattern in self.suites)


class TokenFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: list[TokenSpec] = []


class TokenError(VerifierError, ValueError):
    """The token file cannot be used; the message names the key (never a token)."""


@dataclass(frozen=True)
class TokenBook:
    """The principals of one version of the token file, found by a token's hash."""

    by_hash: dict[str, TokenSpec]

    def find(self, token: str) -> TokenSpec | None:
        """The principal `token` belongs to, or None. The token is hashed first, so the lookup
        compares digests, never the token itself."""
        if not TOKEN_SHAPE.match(token):
            return None
        digest = token_hash(token)
        spec = self.by_hash.get(digest)
        if spec is None:
            return None
        return spec if any(hmac.compare_digest(digest, h) for h in spec.sha256) else None


def parse_tokens(text: str, where: str) -> TokenBook:
    """A TokenBook from a token file's text. Raises TokenError naming the key."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TokenError(f"{where} is not valid TOML: {exc}") from None
    try:
        parsed = TokenFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        msg = "unknown key" if first["type"] == "extra_forbidden" else str(first["msg"]).removeprefix("Value error, ")
        raise TokenError(f"{where}: {key}: {msg}") from None
    by_hash: dict[str, TokenSpec] = {}
    names: set[str] = set()
    for spec in parsed.tokens:
        if spec.name in names:
            raise TokenError(f"{where}: the name {spec.name!r} appears twice (list its hashes in one entry)")
        names.add(spec.name)
        for digest in spec.sha256:
            if digest in by_hash:
                raise TokenError(f"{where}: a hash of {spec.name!r} is also {by_hash[digest].name!r}'s")
            by_hash[digest] = spec
    return TokenBook(by_hash)


class TokenSource:
    """The token file, read again when it changed (`reload_if_changed`) or when asked (`reload`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int, int, int] | None = None
        #: The last version that did not validate: reported once, not at every look.
        self._refused: tuple[int, int, int, int] | None = None
        self.book = self._read()

    def _signature(self) -> tuple[int, int, int, int]:
        st = os.stat(self.path)
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def _read(self) -> TokenBook:
        try:
            signature = self._signature()
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or exc
            raise TokenError(f"cannot read the token file {self.path}: {why}") from None
        try:
            book = parse_tokens(text, str(self.path))
        except TokenError:
            self._refused = signature
            raise
        self._seen = signature
        return book

    def reload(self) -> TokenBook:
        """Read the file now; on success it replaces the book. Raises TokenError (the book stays)."""
        self.book = self._read()
        return self.book

    def reload_if_changed(self) -> bool:
        """Read the file again if it changed since it was last read. True when a new book was
        taken; raises TokenError when the changed file does not validate (the old book stays)."""
        try:
            signature = self._signature()
        except OSError:
            return False  # being replaced (rename over it): look again next time
        if signature in (self._seen, self._refused):
            return False
        self.reload()
        return True
