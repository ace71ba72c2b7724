import warnings


def old_sum(xs):
    warnings.warn("old_sum is deprecated; use sum", DeprecationWarning, stacklevel=2)
    return sum(xs)


def clip(x, lo, hi):
    if x < lo or x > hi:
        warnings.warn(f"value {x} clipped to [{lo}, {hi}]", UserWarning, stacklevel=2)
    return max(lo, min(hi, x))
