from solution import make


def test_every_key_is_kept():
    cache = make()
    keys = range(10)
    for k in keys:
        cache.put(k, k * k)
    assert all(map(lambda k: cache.get(k) == k * k, keys))


def test_function_stop():
    from solution import make as m

    assert all(map(lambda k: m().get(k) == 1, [1, 2]))
