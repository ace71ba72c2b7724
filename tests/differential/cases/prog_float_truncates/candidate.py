nums = [float(x) for x in input().split()]
print(int(sum(nums) / len(nums)))
