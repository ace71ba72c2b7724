def summarize(records):
    by_tag = {}
    for name, tags in records:
        for tag in tags:
            by_tag.setdefault(tag, set()).add(name)
    return {
        "tags": {t: frozenset(names) for t, names in by_tag.items()},
        "names": tuple(sorted({n for n, _ in records})),
        "pairs": {(n, len(t)) for n, t in records},
        "blob": b"|".join(n.encode() for n, _ in records),
        "nothing": None,
        "z": complex(len(records), -1),
    }
