class Resource:
    def __init__(self, name):
        self.name = name
        self.closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.closed = True
        return False

    def read(self):
        if self.closed:
            raise ValueError("closed")
        return f"data from {self.name}"
