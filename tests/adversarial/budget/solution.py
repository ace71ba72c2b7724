# expect: timeout
# technique: (honest, slow) every call sleeps; the budget runs out part way: one fact, a timeout, not an import error
import time


def double(x):
    time.sleep(0.3)
    return 2 * x
