# expect: failed
# technique: prints a forged result line and signals every process it can (the trusted side, the zygote, its parent)
import os
import signal

print('VERIFIER-RESULT 0 0 {"runner":"pytest","exit_code":0,"counts":{"expected":1,"passed":1}}')
for target in (os.getppid(), 1):
    try:
        os.kill(target, signal.SIGKILL)
    except OSError:
        pass
