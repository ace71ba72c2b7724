import sys

data = sys.stdin.read().split()
n, t = int(data[0]), int(data[1])
a = list(map(int, data[2 : 2 + n]))
seen = {}
for j, x in enumerate(a):
    if t - x in seen:
        print(seen[t - x], j)
        break
    seen.setdefault(x, j)
else:
    print(-1)
