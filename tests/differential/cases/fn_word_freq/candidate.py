import re
from collections import Counter


def word_freq(text):
    return dict(Counter(re.findall(r"[a-z']+", text.lower())))


def most_common(text, n):
    counts = word_freq(text)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
