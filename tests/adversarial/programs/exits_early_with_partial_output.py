# expect: failed
# technique: prints a first line and exits 0 early (os._exit, atexit, SystemExit(0) in a finally)
import atexit
import os
import sys

atexit.register(lambda: os._exit(0))
print(1)
sys.stdout.flush()
try:
    raise SystemExit(0)
finally:
    os._exit(0)
