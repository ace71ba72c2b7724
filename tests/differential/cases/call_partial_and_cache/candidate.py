import functools


def greet(greeting, name):
    return f"{greeting}, {name}!"


def bind_greeting(greeting):
    return functools.partial(greet, greeting)


@functools.cache
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
