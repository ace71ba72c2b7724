class IgnoreMissingKeys:
    def __init__(self):
        self.swallowed = 0

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is not None and issubclass(kind, KeyError):
            self.swallowed += 1
            return True
        return False
