# expect: oom
# technique: a small main process exits; a double-forked worker holds 4x the case's memory and prints the answer
import os
import sys
import time

data = sys.stdin.read().split()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        block = bytearray(256 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(0.2)
        print(sum(map(int, data[1:])), flush=True)
        os._exit(0)
    os._exit(0)
os._exit(0)
