# expect: timeout
# technique: prints the answer, closes stdout and stderr, keeps running: the end of output is not the end
import os
import sys

print(sum(map(int, sys.stdin.read().split()[1:])))
sys.stdout.flush()
os.close(1)
os.close(2)
while True:
    pass
