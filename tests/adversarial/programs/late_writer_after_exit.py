# expect: failed
# technique: prints part of the answer, exits 0, and leaves a double-forked child to print the rest later
import os
import sys
import time

data = sys.stdin.read().split()
answer = str(sum(map(int, data[1:])))
sys.stdout.write(answer[:1])
sys.stdout.flush()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(0.3)
        os.write(1, answer[1:].encode() + b"\n")
        os._exit(0)
    os._exit(0)
os._exit(0)
