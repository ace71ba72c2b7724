"""SWE-bench's records, read and checked: instance specs, instances and predictions.

The one home of SWE-bench's field names. `InstanceSpec` is what `--expect` reads (a JSON file
with `FAIL_TO_PASS` / `PASS_TO_PASS`, or a whole instance record); `load_instances` and
`load_predictions` read the two JSONL files of a batch and refuse the first bad line with one
message naming the file, the line and the field (`BadRecord`), before any sandbox starts.
Test lists are JSON lists or, as SWE-bench ships them, JSON-encoded strings of lists.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from verifier.errors import InvalidInput

#: instance ids and model names become folder names: no separators, no dot-files.
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$")


def _test_list(value: Any) -> Any:
    """A JSON list of node ids, or the JSON-encoded string of one (SWE-bench's datasets)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError("not a JSON list of test ids (nor a JSON-encoded string of one)") from None
    return value


TestList = Annotated[list[Annotated[str, Field(min_length=1)]], BeforeValidator(_test_list)]


def _safe_name(value: Any) -> Any:
    if isinstance(value, str) and not _SAFE.match(value):
        raise ValueError("letters, digits and . _ + - only (it names a folder), at most 200 characters")
    return value


SafeName = Annotated[str, BeforeValidator(_safe_name)]


class InstanceSpec(BaseModel):
    """What resolving an instance means: tests that must go failing -> passing, and stay passing."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    fail_to_pass: TestList = Field(alias="FAIL_TO_PASS", description="Failing (or absent) on base, passing on head.")
    pass_to_pass: TestList = Field(alias="PASS_TO_PASS", description="Passing on head (as SWE-bench grades).")


class Instance(InstanceSpec):
    """One SWE-bench instance; `repo` is a local path to a git repository (not a GitHub name)."""

    instance_id: SafeName
    repo: str = Field(min_length=1)
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
        """The model's folder name, as SWE-bench spells it (`/` -> `__`)."""
        return self.model_name_or_path.replace("/", "__")


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


def _records(path: Path, model: type[M]) -> list[tuple[int, M]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BadRecord(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadRecord(f"{path}: not UTF-8 text") from None
    out: list[tuple[int, M]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadRecord(f"{path} line {number}: not JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise BadRecord(f"{path} line {number}: not a JSON object")
        try:
            out.append((number, model.model_validate(data)))
        except ValidationError as exc:
            raise BadRecord(f"{path} line {number}: {_why(exc)}") from None
    if not out:
        raise BadRecord(f"{path}: no records")
    return out


def load_instances(path: Path) -> dict[str, Instance]:
    """Instances by id; every repo must be an existing folder (relative paths: to the file's folder)."""
    found: dict[str, Instance] = {}
    for number, inst in _records(path, Instance):
        if inst.instance_id in found:
            raise BadRecord(f"{path} line {number}: field instance_id: {inst.instance_id} appears twice")
        repo = Path(inst.repo)
        repo = repo if repo.is_absolute() else path.parent / repo
        if not repo.is_dir():
            raise BadRecord(f"{path} line {number}: field repo: {inst.repo} is not a folder (a local git repository)")
        found[inst.instance_id] = inst.model_copy(update={"repo": str(repo.resolve())})
    return found


def load_predictions(path: Path, instances: dict[str, Instance]) -> list[Prediction]:
    """Predictions, each naming a known instance, at most one per (model, instance)."""
    seen: set[tuple[str, str]] = set()
    out: list[Prediction] = []
    for number, pred in _records(path, Prediction):
        if pred.instance_id not in instances:
            raise BadRecord(f"{path} line {number}: field instance_id: {pred.instance_id} is not in the instances")
        key = (pred.model_folder, pred.instance_id)
        if key in seen:
            raise BadRecord(f"{path} line {number}: field instance_id: a second prediction of {key[1]} by {key[0]}")
        try:
            _safe_name(pred.model_folder)
        except ValueError as exc:
            raise BadRecord(f"{path} line {number}: field model_name_or_path: {exc}") from None
        seen.add(key)
        out.append(pred)
    return out


def gold_predictions(instances: dict[str, Instance]) -> list[Prediction]:
    """The instances' own patches as the predictions of a model named `gold` (--gold)."""
    return [
        Prediction(instance_id=i.instance_id, model_patch=i.patch, model_name_or_path="gold")
        for i in instances.values()
    ]
