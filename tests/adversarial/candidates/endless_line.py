# expect: output_limit
# technique: one endless line of output, never a newline
import os


def find_duplicates(values):
    while True:
        os.write(1, b"x" * 65536)
