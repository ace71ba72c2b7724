# expect: failed
# technique: lone surrogates in an exception message and in output, which no UTF-8 encoder accepts (denial of evidence)
import sys

print("out \ud800 put", file=sys.stderr)


def find_duplicates(values):
    raise ValueError("bad \udcff text \ud800")
