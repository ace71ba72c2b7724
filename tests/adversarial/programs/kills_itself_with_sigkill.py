# expect: error
# technique: prints the right answer, then SIGKILLs itself (a kill that looks like the OOM killer's)
import os
import signal
import sys

print(sum(map(int, sys.stdin.read().split()[1:])))
sys.stdout.flush()
os.kill(os.getpid(), signal.SIGKILL)
