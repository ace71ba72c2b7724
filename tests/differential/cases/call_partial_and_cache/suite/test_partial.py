from solution import bind_greeting, fib


def test_partial():
    hi = bind_greeting("Hi")
    assert hi("Bob") == "Hi, Bob!"
    assert hi.args == ("Hi",)


def test_cached_function():
    assert fib(80) == 23416728348467685
    assert fib.cache_info().hits > 0
