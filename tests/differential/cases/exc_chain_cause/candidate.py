class ParseError(ValueError):
    pass


def parse_pair(text):
    try:
        key, value = text.split("=")
    except ValueError as exc:
        raise ParseError(f"not a pair: {text!r}") from exc
    return key.strip(), int(value)
