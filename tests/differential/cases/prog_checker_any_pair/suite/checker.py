def check(input, output, expected):
    lines = input.split("\n")
    nums = [int(x) for x in lines[0].split()]
    target = int(lines[1])
    try:
        i, j = (int(x) for x in output.split())
    except ValueError:
        return False, "two indices expected"
    return i != j and nums[i] + nums[j] == target
