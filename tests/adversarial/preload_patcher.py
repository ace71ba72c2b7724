"""A hostile candidate for the environment's preloaded packages (tests/adversarial/test_data_preload.py):
it monkeypatches numpy and pandas every way a module can be changed in its process, and reports
what it finds, so that a patch surviving into a later candidate process shows."""

import sys

PRELOADED = sorted(m for m in ("numpy", "pandas") if m in sys.modules)  # before this module imports them

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

MARK = "patched-by-an-earlier-candidate"


def preloaded_at_import():
    return PRELOADED


def patch_numpy():
    np.sum = lambda *a, **k: 42
    np.random.seed(1234)  # a known global random state
    np.set_printoptions(precision=1)
    pd.set_option("display.max_rows", 3)
    pd.DataFrame.sum = lambda self, *a, **k: 42
    setattr(np, MARK, True)
    sys.modules["numpy.linalg"].norm = lambda *a, **k: 42


def numpy_patched():
    return (
        hasattr(np, MARK)
        or np.sum([1, 2]) != 3
        or np.get_printoptions()["precision"] != 8
        or pd.get_option("display.max_rows") != 60
        or int(pd.DataFrame({"a": [1, 2]}).sum().iloc[0]) != 3
        or float(np.linalg.norm([3.0, 4.0])) != 5.0
    )


def draw():
    return float(np.random.random())
