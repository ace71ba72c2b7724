# expect: error failed
# technique: patches builtins (isinstance, len, type)
import builtins

builtins.isinstance = lambda *a: True
builtins.type = lambda *a: list
builtins.len = lambda *a: 0


def find_duplicates(values):
    return []
