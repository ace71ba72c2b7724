class Lines:
    def __init__(self, text):
        self._parts = iter(text.splitlines())

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._parts)
