"""`import verifier` works without the ray extra; the Ray backend then says which extra it needs."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys

class NoRay:
    def find_spec(self, name, path=None, target=None):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray' (hidden by the test)")
        return None

sys.meta_path.insert(0, NoRay())
import verifier, verifier.cluster
from verifier.cluster import RayBackend, ray_verifier
from verifier import SandboxUnavailable
assert "ray" not in sys.modules
for make in (RayBackend, ray_verifier):
    try:
        make()
    except SandboxUnavailable as exc:
        print(exc)
    else:
        raise SystemExit("no error without ray")
"""


def test_verifier_imports_without_ray_and_names_the_extra() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["the Ray backend needs Ray: pip install 'sandboxed-verifier[ray]'"] * 2
