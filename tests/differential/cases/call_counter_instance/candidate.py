class Counter:
    def __init__(self):
        self.count = 0

    def __call__(self, step=1):
        self.count += step
        return self.count
