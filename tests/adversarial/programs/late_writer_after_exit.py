# expect: timeout
# technique: prints part of the answer, exits 0, and leaves a double-forked child holding stdout to print the rest later
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
        time.sleep(30)  # past the case's time limit: the case goes on until the pipes close
        os.write(1, answer[1:].encode() + b"\n")
        os._exit(0)
    os._exit(0)
os._exit(0)
