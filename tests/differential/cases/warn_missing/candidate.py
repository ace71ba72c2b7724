def old_sum(xs):
    return sum(xs)
