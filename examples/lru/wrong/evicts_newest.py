"""Wrong eviction: drops the most recently used entry instead of the least."""


class LRU:
    def __init__(self, capacity):
        self.capacity = capacity
        self._items = {}

    def get(self, key, default=None):
        return self._items.get(key, default)

    def put(self, key, value):
        self._items[key] = value
        if len(self._items) > self.capacity:
            newest = list(self._items)[-2]
            del self._items[newest]

    def keys(self):
        return list(self._items)

    def __len__(self):
        return len(self._items)

    def __contains__(self, key):
        return key in self._items

    def __iter__(self):
        return iter(list(self._items))
