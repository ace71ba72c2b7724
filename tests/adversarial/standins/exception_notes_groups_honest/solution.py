# expect: passed
# technique: (honest) PEP 678 notes, exception groups (members, except*, subgroup, split) and builtin exceptions' fields outside args (OSError.filename, ImportError.name) come back as the candidate raised them
class ParseError(ValueError):
    pass


def parse(text):
    exc = ParseError(f"cannot parse {text!r}")
    exc.add_note("hint: numbers must be positive")
    raise exc


def validate_all(items):
    errors = []
    for i, item in enumerate(items):
        if item < 0:
            errors.append(ValueError(f"item {i} is negative"))
        elif item == 0:
            errors.append(TypeError(f"item {i} is zero"))
    if errors:
        raise ExceptionGroup("invalid items", errors)
    return True


def reraised():
    try:
        raise KeyError("inner")
    except KeyError as exc:
        raise RuntimeError("outer") from exc


def load(path):
    raise FileNotFoundError(2, "No such file or directory", path)


def plugin(name):
    raise ImportError(f"no plugin {name}", name=name, path="/plugins")
