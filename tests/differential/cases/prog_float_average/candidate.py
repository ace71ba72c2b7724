nums = [float(x) for x in input().split()]
print(f"{sum(nums) / len(nums):.9f}")
