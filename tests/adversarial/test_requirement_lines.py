"""Requirement lines that smuggle a pip option, a host variable or a download source past the
one rule (`verifier/sandbox/requirements.py`): the host runs pip on what the lines say, so each
must be refused as `invalid_input` naming the line (issue 32 section 6, issue 33 section 3).

Every case of `SMUGGLED` was accepted before the lines were read with `packaging` (the regex
let an option through after the name, after a marker, or as a `--hash` value)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.errors import InvalidInput
from verifier.evidence import Fault, Status
from verifier.sandbox.fake import FakeBackend, answer
from verifier.sandbox.requirements import check_requirement, parse_lines
from verifier.suite import load_suite
from verifier.verify import Verifier

TEST = "from solution import f\n\ndef test_f():\n    assert f() == 1\n"

#: (id, requirements.txt text, the line at fault)
SMUGGLED = [
    ("find-links-after-name", "numpy -f .\n", 1),
    ("index-after-version", "numpy>=1.0 --index-url=evil.invalid\n", 1),
    ("tabs", "numpy\t-f\t.\n", 1),
    ("trusted-host", "numpy --trusted-host=evil.invalid\n", 1),
    ("no-binary", "numpy --no-binary numpy\n", 1),
    ("pre", "pandas\nnumpy --pre\n", 2),
    ("editable-after-name", "numpy -e .\n", 1),
    ("config-settings", "numpy --config-settings=x=y\n", 1),
    ("option-after-marker", 'numpy; python_version >= "3" -f .\n', 1),
    ("option-after-marker-no-space", "numpy;python_version>='3' --extra-index-url=evil.invalid\n", 1),
    ("option-as-hash-value", "numpy --hash -f .\n", 1),
    ("option-after-a-hash", "numpy --hash=sha256:00ff -f .\n", 1),
    ("env-var-in-marker", 'numpy; os_name == "${HOME}"\n', 1),
    ("continuation-after-marker", 'numpy; python_version >= "3" \\\npandas\n', 1),
    ("marker-with-junk", "numpy; os_name == 'posix' . -f\n", 1),
]

#: Neighbours that were refused before too, and must stay refused.
STILL_REFUSED = [
    ("option-line", "-f .\n", 1),
    ("extra-index-url-after-name", "numpy --extra-index-url=https://evil.invalid/simple\n", 1),
    ("direct-url", "numpy @ https://evil.invalid/numpy.whl\n", 1),
    ("direct-no-space", "numpy@https://evil.invalid/numpy.whl\n", 1),
    ("direct-extras", "numpy[x] @ file:///tmp/numpy.whl\n", 1),
    ("vcs", "git+https://evil.invalid/numpy.git\n", 1),
    ("path", "./numpy\n", 1),
    ("env-var-version", "numpy==${EVIL}\n", 1),
    ("continuation", "numpy \\\n-f .\n", 1),
    ("comment-glued", "numpy#-f .\n", 1),
    ("shell", "numpy$(whoami)\n", 1),
]


def _suite(tmp_path: Path, requirements: str) -> Path:
    root = tmp_path / "suite"
    root.mkdir(parents=True, exist_ok=True)
    (root / "test_f.py").write_text(TEST)
    (root / "requirements.txt").write_text(requirements)
    return root


@pytest.mark.parametrize(("text", "line"), [c[1:] for c in SMUGGLED], ids=[c[0] for c in SMUGGLED])
def test_a_smuggled_option_is_refused_naming_the_line(tmp_path: Path, text: str, line: int) -> None:
    with pytest.raises(InvalidInput, match=rf"requirements\.txt:{line}\b"):
        load_suite(_suite(tmp_path, text))
    backend = FakeBackend(answer)
    evidence = Verifier(backend=backend, image="img").check("def f():\n    return 1\n", _suite(tmp_path, text))
    assert (evidence.status, evidence.fault) == (Status.INVALID_INPUT, Fault.INPUT)
    assert backend.jobs == []  # refused before any sandbox (or pip) ran


@pytest.mark.parametrize(("text", "line"), [c[1:] for c in STILL_REFUSED], ids=[c[0] for c in STILL_REFUSED])
def test_the_neighbours_stay_refused(tmp_path: Path, text: str, line: int) -> None:
    with pytest.raises(InvalidInput, match=rf"requirements\.txt:{line}\b"):
        load_suite(_suite(tmp_path, text))


@pytest.mark.parametrize(("text", "line"), [c[1:] for c in SMUGGLED], ids=[c[0] for c in SMUGGLED])
def test_every_door_refuses_them(text: str, line: int) -> None:
    """The suite.toml form, the agent sandbox's `requirements=[...]` and review's reading of a
    repository's lines share the rule."""
    lines = text.replace("\\\n", "\\ ").splitlines()
    with pytest.raises(InvalidInput, match=rf"requirements:{line}\b"):
        parse_lines(lines, "requirements")
    with pytest.raises(InvalidInput):
        for number, one in enumerate(lines, 1):
            check_requirement(one, f"requirements:{number}")
