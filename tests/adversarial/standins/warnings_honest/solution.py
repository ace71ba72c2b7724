# expect: passed
# technique: (honest) warnings the candidate emits reach pytest.warns and recwarn
import warnings


class OldApiWarning(DeprecationWarning):
    pass


def old(x):
    warnings.warn("old() is deprecated, use new()", OldApiWarning, stacklevel=2)
    return x + 1


def noisy():
    warnings.warn("careful")
    return 1
