# expect: failed
# technique: the candidate patches its own process's request loop to answer every call "stop" (the reply only next() may give)
import sys

_runner = sys.modules.get("verifier_runner.candidate")
if _runner is not None:
    _runner._perform = lambda *args: _runner._STOP


def square(k):
    return k + 1
