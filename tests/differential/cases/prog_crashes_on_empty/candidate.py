import sys

lines = sys.stdin.read().splitlines()
numbers = [int(x) for x in lines[1].split()]
print(sum(numbers) if numbers else numbers[0])
