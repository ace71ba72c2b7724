"""Where a bench script leaves what it measured: bench/results/<name>-<UTC time>.json, the same
record printed on stdout and the file's path on stderr."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def write(name: str, record: Mapping[str, Any]) -> Path:
    """Write `record` as bench/results/<name>-<UTC time>.json; its path."""
    target = RESULTS / f"{name}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}.json"
    target.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))
    print(f"wrote {target}", file=sys.stderr)
    return target
