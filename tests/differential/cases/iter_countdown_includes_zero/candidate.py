class Countdown:
    def __init__(self, start):
        self.current = start

    def __iter__(self):
        return self

    def __next__(self):
        if self.current < 0 or getattr(self, "done", False):
            raise StopIteration
        value = self.current
        self.current -= 1
        if value == 0:
            self.done = True
        return value
