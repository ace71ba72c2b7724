# expect: failed
# technique: Unicode bidi overrides and zero-width characters that make a message read differently from its bytes
def find_duplicates(values):
    raise ValueError("status: \u202edeliaf\u202c \u200bok: true\u2066")
