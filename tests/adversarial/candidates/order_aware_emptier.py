# expect: failed
# technique: correct for the first calls of its process (the example tests), then empties its input and returns []
_calls = 0


def find_duplicates(values):
    global _calls
    _calls += 1
    if _calls <= 3:
        seen, out = [], []
        for v in values:
            if v in seen:
                if v not in out:
                    out.append(v)
            else:
                seen.append(v)
        return out
    values.clear()
    return []
