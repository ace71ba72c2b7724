class History:
    def __init__(self):
        self._events = []

    def record(self, e):
        self._events.append(e)

    def __iter__(self):
        return iter(self._events)

    def __len__(self):
        return len(self._events)

    def __reversed__(self):
        return reversed(self._events)
