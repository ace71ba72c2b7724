class Bag:
    def __init__(self, items=()):
        self._counts = {}
        for x in items:
            self.add(x)

    def add(self, x):
        self._counts[x] = self._counts.get(x, 0) + 1

    def __len__(self):
        return len(self._counts)

    def __iter__(self):
        for x, n in self._counts.items():
            for _ in range(n):
                yield x

    def __contains__(self, x):
        return x in self._counts

    def __getitem__(self, x):
        return self._counts.get(x, 0)

    def __setitem__(self, x, n):
        self._counts[x] = n

    def __delitem__(self, x):
        del self._counts[x]
