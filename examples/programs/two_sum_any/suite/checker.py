def check(input, output, expected):
    """Any pair i < j (1-based) with a[i] + a[j] == t is right; -1 only when there is none."""
    data = input.split()
    n, t = int(data[0]), int(data[1])
    a = [int(x) for x in data[2 : 2 + n]]
    got = output.split()
    if expected.split() == ["-1"]:
        return got == ["-1"], "there is no such pair"
    if len(got) != 2:
        return False, f"expected two indices, got {len(got)} tokens"
    try:
        i, j = int(got[0]), int(got[1])
    except ValueError:
        return False, "the indices are not integers"
    if not 1 <= i < j <= n:
        return False, "the indices must satisfy 1 <= i < j <= n"
    return a[i - 1] + a[j - 1] == t, "a[i] + a[j] must equal t"
