import sys

for line in sys.stdin:
    words = line.split()
    print(" ".join(reversed(words)))
