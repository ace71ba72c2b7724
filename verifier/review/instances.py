"""SWE-bench's records, read and checked: instance specs, instances and predictions.

The one home of SWE-bench's field names. `InstanceSpec` is what `--expect` reads (a JSON file
with `FAIL_TO_PASS` / `PASS_TO_PASS`, or a whole instance record); `load_instances` and
`load_predictions` read the two files of a batch (each a JSON list, a JSON object keyed by
instance id, or JSON lines, as SWE-bench's harness accepts them) and refuse the first bad record
with one message naming the file, the record and the field (`BadRecord`), before any sandbox
starts. Test lists are JSON lists or, as SWE-bench ships them, JSON-encoded strings of lists.

`model_folder` / `model_name` map model names to folder names and back, one to one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from verifier.errors import InvalidInput

#: instance ids become folder names as they are: no separators, no dot-files.
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$")
#: names an instance folder cannot have: the model folder's own files (case-insensitively).
_RESERVED_IDS = frozenset({"summary.json", "summary.json.tmp"})
#: names a model folder cannot have: the batch folder's own entries (case-insensitively).
_RESERVED_MODELS = frozenset({"swebench"})
#: the longest folder name a model gets (file systems allow 255 bytes).
MAX_FOLDER = 200
#: the largest instances or predictions file read (SWE-bench's full test set is about 100 MB).
MAX_RECORDS_FILE = 1 << 30
#: `owner/name`, as SWE-bench's `repo` field spells a GitHub repository.
_OWNER_NAME = re.compile(r"^([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)$")
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.+-")


def model_folder(name: str) -> str:
    """The folder name of a model, one to one and reversible (`model_name`).

    As SWE-bench spells it (`/` becomes `__`) for every name made of letters, digits, `. _ + -`
    and `/` with no `_` beside another `_` or a `/`, and with no leading `.`; otherwise
    - a `_` beside a `_` or a `/` becomes `%5F` (so `acme__m` is `acme%5F%5Fm`, never `acme/m`'s `acme__m`),
    - every other character (and a leading `.`) becomes `%XX` per UTF-8 byte (`%` itself: `%25`),
    - a name whose folder would be one of the batch folder's own entries (`swebench`) gets its
      first character escaped.
    Folder names are ASCII, so Unicode normalisation by a file system cannot merge two of them;
    names that differ only in letter case are refused per batch (`check_folders`).
    """
    out: list[str] = []
    for i, ch in enumerate(name):
        prev = name[i - 1] if i > 0 else ""
        nxt = name[i + 1] if i + 1 < len(name) else ""
        if ch == "/":
            out.append("__")
        elif ch == "_":
            out.append("%5F" if prev in ("_", "/") or nxt in ("_", "/") else "_")
        elif ch in _PLAIN and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
    folder = "".join(out)
    if folder.lower() in _RESERVED_MODELS:
        folder = f"%{ord(folder[0]):02X}" + folder[1:]
    return folder


def model_name(folder: str) -> str:
    """The model name a folder stands for (the inverse of `model_folder`); ValueError when no name maps to it."""
    raw = bytearray()
    i = 0
    while i < len(folder):
        ch = folder[i]
        if ch == "%":
            hexed = folder[i + 1 : i + 3]
            if len(hexed) != 2 or not all(c in "0123456789ABCDEF" for c in hexed):
                raise ValueError(f"{folder!r}: a % not followed by two upper-case hex digits")
            raw.append(int(hexed, 16))
            i += 3
        elif ch == "_":
            run = len(folder[i:]) - len(folder[i:].lstrip("_"))
            if run > 1 and run % 2:
                raise ValueError(f"{folder!r}: an odd run of underscores")
            raw += b"_" if run == 1 else b"/" * (run // 2)
            i += run
        else:
            raw += ch.encode("utf-8", "surrogatepass")
            i += 1
    try:
        name = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise ValueError(f"{folder!r}: not UTF-8 once unescaped") from None
    if model_folder(name) != folder:
        raise ValueError(f"{folder!r}: not the folder name of any model (that is {model_folder(name)!r})")
    return name


def _test_list(value: Any) -> Any:
    """A JSON list of node ids, or the JSON-encoded string of one (SWE-bench's datasets)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError("not a JSON list of test ids (nor a JSON-encoded string of one)") from None
    return value


TestList = Annotated[list[Annotated[str, Field(min_length=1)]], BeforeValidator(_test_list)]


def safe_name(value: Any) -> Any:
    """`value` when it can name a folder as it is (instance ids, run ids); ValueError otherwise."""
    if isinstance(value, str) and not _SAFE.match(value):
        raise ValueError("letters, digits and . _ + - only (it names a folder), at most 200 characters")
    if isinstance(value, str) and value.lower() in _RESERVED_IDS:
        raise ValueError(f"{value} names a file of the model's folder")
    return value


SafeName = Annotated[str, BeforeValidator(safe_name)]


class InstanceSpec(BaseModel):
    """What resolving an instance means: tests that must go failing -> passing, and stay passing."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    fail_to_pass: TestList = Field(alias="FAIL_TO_PASS", description="Failing (or absent) on base, passing on head.")
    pass_to_pass: TestList = Field(alias="PASS_TO_PASS", description="Passing on head (as SWE-bench grades).")


class Instance(InstanceSpec):
    """One SWE-bench instance. Loaded, `repo` is the local git repository's absolute path and
    `repo_given` the field as the file gave it (`owner/name` or a path)."""

    instance_id: SafeName
    repo: str = Field(min_length=1)
    repo_given: str = Field("", description="Set by load_instances: `repo` as the file gave it.")
    base_commit: str = Field(min_length=1)
    patch: str = Field("", description="The gold patch (used with --gold only).")
    test_patch: str = Field(min_length=1)


class Prediction(BaseModel):
    """One model's patch for one instance."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    instance_id: SafeName
    model_patch: str | None = Field(description="The model's diff; empty or null is an unresolved instance.")
    model_name_or_path: str = Field(min_length=1)

    @property
    def model_folder(self) -> str:
        """The model's folder name (`model_folder`: one to one; `/` -> `__` as SWE-bench for plain names)."""
        return model_folder(self.model_name_or_path)


class BadRecord(InvalidInput):
    """A record that does not fit: the message names the file, the line and the field."""


def _why(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "the record"
    return f"field {where}: {first['msg']}"


def load_spec(path: Path) -> InstanceSpec:
    """The spec in `path` (JSON: the two lists, or an instance record). Raises BadRecord."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadRecord(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRecord(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BadRecord(f"{path}: not a JSON object with FAIL_TO_PASS and PASS_TO_PASS")
    try:
        return InstanceSpec.model_validate(data)
    except ValidationError as exc:
        raise BadRecord(f"{path}: {_why(exc)}") from None


M = TypeVar("M", bound=BaseModel)


def _read(path: Path) -> str:
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise BadRecord(f"{path}: not a file")
        if size > MAX_RECORDS_FILE:
            raise BadRecord(f"{path}: {size} bytes, over the {MAX_RECORDS_FILE} bytes read")
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadRecord(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadRecord(f"{path}: not UTF-8 text") from None


def _raw_records(path: Path, text: str) -> Iterator[tuple[str, Any]]:
    """(where, record) in the file's order: a JSON list ("item N"), a JSON object keyed by
    instance id ("key K"; the key is the record's instance_id), or JSON lines ("line N")."""
    head = text.lstrip()
    if head.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadRecord(f"{path}: not a JSON list ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
        if not isinstance(items, list):
            raise BadRecord(f"{path}: not a JSON list")
        yield from ((f"item {n}", item) for n, item in enumerate(items, 1))
        return
    try:
        whole = json.loads(text) if head.startswith("{") else None
    except json.JSONDecodeError:
        whole = None  # JSON lines (more than one), or a bad file: line by line says where
    if isinstance(whole, dict) and whole and all(isinstance(v, dict) for v in whole.values()):
        for key, item in whole.items():
            where = f"key {json.dumps(key)[:80]}"
            if "instance_id" in item and item["instance_id"] != key:
                raise BadRecord(f"{path} {where}: field instance_id: {str(item['instance_id'])[:80]} is not its key")
            yield where, {"instance_id": key} | item
        return
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield f"line {number}", json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadRecord(f"{path} line {number}: not JSON ({exc.msg})") from None


def _records(path: Path, model: type[M]) -> list[tuple[str, M]]:
    out: list[tuple[str, M]] = []
    for where, data in _raw_records(path, _read(path)):
        if not isinstance(data, dict):
            raise BadRecord(f"{path} {where}: not a JSON object")
        try:
            out.append((where, model.model_validate(data)))
        except ValidationError as exc:
            raise BadRecord(f"{path} {where}: {_why(exc)}") from None
    if not out:
        raise BadRecord(f"{path}: no records")
    return out


def find_repo(given: str, base: Path, repos_dir: Path | None) -> tuple[Path, str]:
    """(the local clone, how it was found) for an instance's `repo`; ValueError saying where it looked.

    With `repos_dir`, an `owner/name` is `repos_dir/owner__name` or `repos_dir/owner/name` (one of
    them: both existing is refused, as they may be different clones); without, `repo` is a path
    (relative: to the instances file's folder)."""
    if repos_dir is not None:
        m = _OWNER_NAME.match(given)
        if m is None or any(part in (".", "..") for part in m.groups()):
            raise ValueError(f"{given} is not owner/name (with --repos-dir every repo is a GitHub name)")
        flat, nested = repos_dir / f"{m[1]}__{m[2]}", repos_dir / m[1] / m[2]
        found = [p for p in (flat, nested) if p.is_dir()]
        if len(found) == 2 and flat.resolve() != nested.resolve():
            raise ValueError(f"{given}: both {flat} and {nested} exist; keep one")
        if not found:
            raise ValueError(f"{given}: no clone at {flat} or {nested}")
        return found[0].resolve(), str(found[0])
    path = Path(given)
    path = path if path.is_absolute() else base / path
    if not path.is_dir():
        hint = " (an owner/name: give --repos-dir DIR, clones as DIR/owner__name)" if _OWNER_NAME.match(given) else ""
        raise ValueError(f"{given} is not a folder (a local git repository){hint}")
    return path.resolve(), str(path)


def check_folders(names: list[str], what: str) -> None:
    """Refuse two names whose folders differ only in letter case (one folder on a case-insensitive file system)."""
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(name.lower(), name)
        if other != name:
            raise ValueError(
                f"{what} {other} and {name} differ only in letter case: one folder on a case-insensitive file system"
            )


def load_instances(path: Path, repos_dir: Path | None = None) -> dict[str, Instance]:
    """Instances by id, each `repo` found as a local folder (`find_repo`); `repo_given` keeps the field."""
    found: dict[str, Instance] = {}
    for where, inst in _records(path, Instance):
        if inst.instance_id in found:
            raise BadRecord(f"{path} {where}: field instance_id: {inst.instance_id} appears twice")
        try:
            check_folders([*found, inst.instance_id], "instance ids")
            repo, _ = find_repo(inst.repo, path.parent, repos_dir)
        except ValueError as exc:
            field = "instance_id" if "letter case" in str(exc) else "repo"
            raise BadRecord(f"{path} {where}: field {field}: {exc}") from None
        found[inst.instance_id] = inst.model_copy(update={"repo": str(repo), "repo_given": inst.repo})
    return found


def load_predictions(path: Path, instances: dict[str, Instance]) -> list[Prediction]:
    """Predictions, each naming a known instance, at most one per (model, instance)."""
    seen: set[tuple[str, str]] = set()
    models: dict[str, None] = {}
    out: list[Prediction] = []
    for where, pred in _records(path, Prediction):
        if pred.instance_id not in instances:
            raise BadRecord(f"{path} {where}: field instance_id: {pred.instance_id} is not in the instances")
        key = (pred.model_name_or_path, pred.instance_id)
        if key in seen:
            raise BadRecord(f"{path} {where}: field instance_id: a second prediction of {key[1]} by {key[0][:200]}")
        if len(pred.model_folder) > MAX_FOLDER:
            raise BadRecord(f"{path} {where}: field model_name_or_path: too long to name a folder")
        models.setdefault(pred.model_name_or_path)
        try:
            check_folders([model_folder(m) for m in models], "the folders of model names")
        except ValueError as exc:
            raise BadRecord(f"{path} {where}: field model_name_or_path: {exc}") from None
        seen.add(key)
        out.append(pred)
    return out


def gold_predictions(instances: dict[str, Instance]) -> list[Prediction]:
    """The instances' own patches as the predictions of a model named `gold` (--gold)."""
    return [
        Prediction(instance_id=i.instance_id, model_patch=i.patch, model_name_or_path="gold")
        for i in instances.values()
    ]
