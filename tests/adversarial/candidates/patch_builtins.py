# expect: error failed
import builtins

builtins.isinstance = lambda *a: True
builtins.type = lambda *a: list
builtins.len = lambda *a: 0


def find_duplicates(values):
    return []
