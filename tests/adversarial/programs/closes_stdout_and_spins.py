# expect: timeout
# technique: prints the answer, closes stdout and stderr, and keeps running: the end of output is not the end of the program
import os
import sys

print(sum(map(int, sys.stdin.read().split()[1:])))
sys.stdout.flush()
os.close(1)
os.close(2)
while True:
    pass
