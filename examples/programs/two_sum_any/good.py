import sys

data = sys.stdin.read().split()
n, t = int(data[0]), int(data[1])
a = list(map(int, data[2 : 2 + n]))
last = {}
for i, x in enumerate(a):
    last[x] = i
for i, x in enumerate(a):
    j = last.get(t - x)
    if j is not None and j > i:
        print(i + 1, j + 1)
        break
else:
    print(-1)
