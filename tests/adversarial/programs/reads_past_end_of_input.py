# expect: timeout
# technique: reads stdin a byte at a time and keeps reading after the end (hangs on input that never comes)
import sys

total = 0
while True:
    chunk = sys.stdin.read(1)
    total += len(chunk)
