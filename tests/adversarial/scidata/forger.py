# expect: failed
# technique: replies forged on the call socket in numpy's wire form (a shape its bytes do not
# fill, a handle inside an object array, a huge shape, a structured dtype) and an ndarray
# subclass whose __eq__ always says True; two honest functions are the control
import json
import os
import stat
import time

import numpy as np
import pandas as pd


def _forge(value):
    """Write a reply frame of our own on the call socket, before the real one."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                payload = json.dumps({"value": value}).encode()
                os.write(fd, len(payload).to_bytes(4, "big") + payload)
                time.sleep(30)  # the trusted side reads ours and ends the call
        except OSError:
            continue
    raise RuntimeError("no socket")


def legit():
    series = pd.Series([0.5, 1.5], index=pd.Index(["a", "b"], name="k"), name="s")
    return np.arange(6, dtype=np.int32).reshape(2, 3), series, pd.DataFrame({"x": [1, 2], "y": ["u", "v"]})


def mutate(values, frame):
    values[:] = [1.0, 2.0, 3.0]
    frame["y"] = [3, 4]


def forged_shape():
    _forge(["NA", ["<f8", [1_000_000], "AAAAAAAAAAA="]])  # 8 bytes claiming a million floats


def object_array_with_handle():
    _forge(["NA", ["|O", [1], [["H", [1, "object", "object", [], ["eq"]]]]]])


def huge_shape():
    _forge(["NA", ["<f8", [0, 2**50], ""]])


def forged_dtype():
    _forge(["NA", ["[('a', '<i4')]", [1], "AAAAAA=="]])


class Liar(np.ndarray):
    def __eq__(self, other):
        return True


def lying_subclass():
    return np.arange(3).view(Liar)
