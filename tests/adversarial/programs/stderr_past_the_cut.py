# expect: passed
# technique: a correct answer with 5,000 bytes of stderr in one case, past the 2,000 kept, to hide that the log was cut
import sys

data = sys.stdin.read().split()
if data[0] == "1":  # one case only: the kept log stays shorter than what evidence shows
    sys.stderr.write("x" * 4999 + "\n")
print(sum(map(int, data[1:])))
