LOG = []


def reader(lines):
    LOG.append("open")
    try:
        yield from lines
    finally:
        LOG.append("closed")


def log():
    return list(LOG)
