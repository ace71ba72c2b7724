# expect: failed error timeout
# technique: a fork bomb that fills the process table, then prints a wrong answer
import os

children = 0
while children < 10_000:
    try:
        if os.fork() == 0:
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
        children += 1
    except OSError:
        break
print(-1)
