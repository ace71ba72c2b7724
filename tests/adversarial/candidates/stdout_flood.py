# expect: output_limit
# technique: floods stdout with hundreds of MB
import sys


def find_duplicates(values):
    chunk = b"\xff\xfe not utf-8 " * 100_000
    while True:
        sys.stdout.buffer.write(chunk)
