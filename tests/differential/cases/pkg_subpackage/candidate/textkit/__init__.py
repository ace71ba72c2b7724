from .tokens.split import words


def count_words(text):
    return len(words(text))
