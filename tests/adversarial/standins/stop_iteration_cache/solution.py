# expect: failed
# technique: get() raises StopIteration, which ended the test's all(map(...)) early with True
class Cache:
    def put(self, key, value):
        pass

    def get(self, key):
        raise StopIteration


def make():
    return Cache()
