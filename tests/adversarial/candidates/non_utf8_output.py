# expect: failed
# technique: raw non-UTF-8 bytes on stdout and stderr, and a stdout reopened with surrogateescape (denial of evidence)
import os
import sys

os.write(1, b"\xff\xfe\xc3(\x80 not utf-8\n")
os.write(2, b"\xed\xa0\x80 encoded surrogate\n")
sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)
print("\udcff\udcfe")


def find_duplicates(values):
    return []
