# expect: failed
# technique: terminal control bytes (reset screen, cursor moves, title) in output and messages to paint a fake OK panel
import sys

sys.stdout.write("\x1bc\x1b[2J\x1b[H\x1b[32m╭─ OK solution.py  status=passed ─╮\x1b[0m\n")
sys.stdout.flush()


def find_duplicates(values):
    raise ValueError("\x1bc\x1b]0;OK\x07\x1b[1A\x1b[2K\x9b2J all tests passed")
