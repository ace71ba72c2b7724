"""Writes the shipped stdin/stdout problem set: problems.jsonl, samples.jsonl and two suite folders.

    python examples/programs/make_problems.py

Every problem has a reference solution here (a Python function from input text to output text,
run on the host to make the expected outputs from seeded inputs), at least ten cases, one or
more correct programs and one or more wrong programs. Each sample carries `expect`: the status
the verifier must give it (the tests hold it to that, and to agreement with the plain judge in
bench/io_plain.py). Deterministic: the same script writes the same files.
"""

from __future__ import annotations

import json
import math
import random
import shutil
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
MiB = 1024**2


@dataclass
class Problem:
    problem_id: str
    statement: str
    inputs: list[str]
    solve: Callable[[str], str]
    correct: list[str]
    #: (program, expected status, what is wrong with it)
    wrong: list[tuple[str, str, str]]
    compare: str | None = None
    checker: str | None = None
    time_limit_s: float = 1.0
    memory_bytes: int = 64 * MiB
    extra: dict[str, object] = field(default_factory=dict)


def lines(*rows: object) -> str:
    return "".join(f"{r}\n" for r in rows)


PROBLEMS: list[Problem] = []


def problem(**kw: object) -> None:
    PROBLEMS.append(Problem(**kw))  # type: ignore[arg-type]


# 1 ---------------------------------------------------------------------------------------
def _a_plus_b_inputs(rng: random.Random) -> list[str]:
    out = [lines(1, "1 2"), lines(1, "0 0"), lines(2, "-5 5", f"{10**18} {10**18}")]
    for t in (3, 10, 50, 100, 200, 500, 1000):
        out.append(lines(t, *(f"{rng.randint(-(10**18), 10**18)} {rng.randint(-(10**18), 10**18)}" for _ in range(t))))
    return out


def _a_plus_b(text: str) -> str:
    rows = text.split("\n")
    t = int(rows[0])
    return lines(*(sum(map(int, rows[i].split())) for i in range(1, t + 1)))


problem(
    problem_id="a-plus-b",
    statement="T lines of two integers; print each sum on its own line.",
    inputs=_a_plus_b_inputs(random.Random(1)),
    solve=_a_plus_b,
    correct=[
        "import sys\n\n"
        "data = sys.stdin.read().split()\n"
        "t = int(data[0])\n"
        'print("\\n".join(str(int(data[1 + 2 * i]) + int(data[2 + 2 * i])) for i in range(t)))\n',
        # debugging noise on stderr never counts
        "import sys\n"
        "t = int(input())\n"
        "for i in range(t):\n"
        "    a, b = map(int, input().split())\n"
        "    print(f'debug: case {i}', file=sys.stderr)\n"
        "    print(a + b)\n",
    ],
    wrong=[
        (
            "t = int(input())\na, b = map(int, input().split())\nprint(a + b)\n",
            "failed",
            "answers the first pair only and exits 0 (partial output)",
        ),
    ],
)


# 2 ---------------------------------------------------------------------------------------
WORDS = [
    *("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"),
    *("lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau"),
]


def _words_inputs(rng: random.Random) -> list[str]:
    out = [lines("hello"), lines("hello world"), lines("a b c", "d")]
    for n in (3, 5, 10, 20, 40, 80, 150):
        out.append(lines(*(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) for _ in range(n))))
    return out


problem(
    problem_id="reverse-words",
    statement="Print each line with its words in reverse order, separated by single spaces.",
    inputs=_words_inputs(random.Random(2)),
    solve=lambda text: lines(*(" ".join(reversed(row.split())) for row in text.splitlines())),
    compare="exact",
    correct=["import sys\nfor line in sys.stdin:\n    print(' '.join(reversed(line.split())))\n"],
    wrong=[
        (
            "import sys\nfor line in sys.stdin:\n    print(line.rstrip('\\n')[::-1])\n",
            "failed",
            "reverses the characters, not the words",
        )
    ],
)


# 3 ---------------------------------------------------------------------------------------
def _array_inputs(rng: random.Random, big: int, lo: int = -1000, hi: int = 1000) -> list[str]:
    out = [lines(1, 5), lines(1, -7), lines(3, "-1 -2 -3"), lines(5, "1 -2 3 -4 5")]
    for n in (10, 50, 200, 1000):
        out.append(lines(n, " ".join(str(rng.randint(lo, hi)) for _ in range(n))))
    for _ in range(2):
        out.append(lines(big, " ".join(str(rng.randint(lo, hi)) for _ in range(big))))
    return out


def _kadane(text: str) -> str:
    a = list(map(int, text.split()[1:]))
    best, cur = a[0], 0
    for x in a:
        cur = max(x, cur + x)
        best = max(best, cur)
    return lines(best)


problem(
    problem_id="max-subarray",
    statement="n, then n integers: the largest sum of a non-empty contiguous subarray.",
    inputs=_array_inputs(random.Random(3), 20000),
    solve=_kadane,
    correct=[
        "import sys\n"
        "a = list(map(int, sys.stdin.read().split()[1:]))\n"
        "best, cur = a[0], 0\n"
        "for x in a:\n"
        "    cur = max(x, cur + x)\n"
        "    best = max(best, cur)\n"
        "print(best)\n"
    ],
    wrong=[
        (
            "import sys\n"
            "a = list(map(int, sys.stdin.read().split()[1:]))\n"
            "best = a[0]\n"
            "for i in range(len(a)):\n"
            "    s = 0\n"
            "    for j in range(i, len(a)):\n"
            "        s += a[j]\n"
            "        if s > best:\n"
            "            best = s\n"
            "print(best)\n",
            "timeout",
            "quadratic: too slow for n = 20000",
        ),
        (
            "import sys\n"
            "a = list(map(int, sys.stdin.read().split()[1:]))\n"
            "best = cur = 0\n"
            "for x in a:\n"
            "    cur = max(0, cur + x)\n"
            "    best = max(best, cur)\n"
            "print(best)\n",
            "failed",
            "allows the empty subarray: 0 for all-negative input",
        ),
    ],
)


# 4 ---------------------------------------------------------------------------------------
def _primes_inputs(rng: random.Random) -> list[str]:
    out = [lines(1, 1), lines(1, 2), lines(3, "10 100 1000"), lines(2, "0 29")]
    for q, top in ((5, 10**3), (10, 10**4), (20, 10**5), (5, 3 * 10**5), (3, 10**6), (1, 10**6)):
        out.append(lines(q, " ".join(str(rng.randint(0, top)) for _ in range(q))))
    # Many queries of one size: a sieve answers them at once; trial division redoes every number
    # for every query, about 10^3 times the time limit here and far beyond it on any machine.
    out.append(lines(1000, " ".join(str(rng.randint(4 * 10**5, 5 * 10**5)) for _ in range(1000))))
    return out


def _count_primes(text: str) -> str:
    qs = list(map(int, text.split()[1:]))
    top = max(qs) + 1
    sieve = bytearray([1]) * (top + 1)
    sieve[0:2] = b"\x00\x00"
    for i in range(2, int(top**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(range(i * i, top + 1, i)))
    prefix, c = [], 0
    for v in sieve:
        c += v
        prefix.append(c)
    return lines(*(prefix[q] for q in qs))


problem(
    problem_id="count-primes",
    statement="q, then q numbers n (n <= 10^6): for each, how many primes are <= n.",
    inputs=_primes_inputs(random.Random(4)),
    solve=_count_primes,
    time_limit_s=2.0,
    correct=[
        "import sys\n"
        "from itertools import accumulate\n"
        "qs = list(map(int, sys.stdin.read().split()[1:]))\n"
        "top = max(qs) + 1\n"
        "sieve = bytearray([1]) * (top + 1)\n"
        "sieve[0:2] = b'\\x00\\x00'\n"
        "for i in range(2, int(top ** 0.5) + 1):\n"
        "    if sieve[i]:\n"
        "        sieve[i * i::i] = bytearray(len(range(i * i, top + 1, i)))\n"
        "prefix = list(accumulate(sieve))\n"
        "print('\\n'.join(str(prefix[q]) for q in qs))\n"
    ],
    wrong=[
        (
            "import sys\n"
            "def is_prime(k):\n"
            "    if k < 2:\n"
            "        return False\n"
            "    d = 2\n"
            "    while d * d <= k:\n"
            "        if k % d == 0:\n"
            "            return False\n"
            "        d += 1\n"
            "    return True\n"
            "for q in map(int, sys.stdin.read().split()[1:]):\n"
            "    print(sum(is_prime(k) for k in range(q + 1)))\n",
            "timeout",
            "trial division of every number for every query: 10^3 queries near 5 * 10^5 take ~10^3 times the limit",
        )
    ],
)


# 5 ---------------------------------------------------------------------------------------
MOD = 10**9 + 7


def _fib(n: int) -> int:
    def pair(k: int) -> tuple[int, int]:
        if k == 0:
            return 0, 1
        a, b = pair(k >> 1)
        c = a * ((2 * b - a) % MOD) % MOD
        d = (a * a + b * b) % MOD
        return (d, (c + d) % MOD) if k & 1 else (c, d)

    return pair(n)[0]


def _fib_inputs(rng: random.Random) -> list[str]:
    out = [lines(1, 0), lines(1, 1), lines(3, "2 3 10"), lines(2, "50 90")]
    for q, top in ((5, 100), (10, 1000), (20, 10**4), (5, 10**5)):
        out.append(lines(q, " ".join(str(rng.randint(0, top)) for _ in range(q))))
    out.append(lines(3, f"{10**18} {10**17 + 3} 123456789012"))
    out.append(lines(1, 10**18 - 1))
    return out


problem(
    problem_id="fib-mod",
    statement="q, then q numbers n (n <= 10^18): the n-th Fibonacci number modulo 10^9+7 (F0 = 0, F1 = 1).",
    inputs=_fib_inputs(random.Random(5)),
    solve=lambda text: lines(*(_fib(int(x)) for x in text.split()[1:])),
    correct=[
        "import sys\n"
        "M = 10 ** 9 + 7\n"
        "def fib(n):\n"
        "    a, b = 0, 1\n"
        "    for bit in bin(n)[2:]:\n"
        "        c = a * ((2 * b - a) % M) % M\n"
        "        d = (a * a + b * b) % M\n"
        "        a, b = (d, (c + d) % M) if bit == '1' else (c, d)\n"
        "    return a\n"
        "print('\\n'.join(str(fib(int(x))) for x in sys.stdin.read().split()[1:]))\n"
    ],
    wrong=[
        (
            "import sys\n"
            "M = 10 ** 9 + 7\n"
            "for x in sys.stdin.read().split()[1:]:\n"
            "    a, b = 0, 1\n"
            "    for _ in range(int(x)):\n"
            "        a, b = b, (a + b) % M\n"
            "    print(a)\n",
            "timeout",
            "linear in n: never ends for n = 10^18",
        )
    ],
)


# 6 ---------------------------------------------------------------------------------------
problem(
    problem_id="sort-numbers",
    statement="n, then n integers: print them in increasing order on one line.",
    inputs=_array_inputs(random.Random(6), 3000, -(10**6), 10**6),
    solve=lambda text: lines(" ".join(map(str, sorted(map(int, text.split()[1:]))))),
    correct=["import sys\nprint(*sorted(map(int, sys.stdin.read().split()[1:])))\n"],
    wrong=[
        (
            "import sys\nprint(*sorted(sys.stdin.read().split()[1:]))\n",
            "failed",
            "sorts the numbers as strings",
        )
    ],
)


# 7 ---------------------------------------------------------------------------------------
def _pal_inputs(rng: random.Random) -> list[str]:
    base = ["A man, a plan, a canal: Panama", "racecar", "hello", "No 'x' in Nixon", "ab", "a", "Abba", "abca"]
    out = [lines(*base[:2]), lines(*base[2:5]), lines(*base)]
    for n in (5, 10, 20, 40, 80, 120, 200):
        rows = []
        for _ in range(n):
            half = "".join(rng.choice("abcXYZ") for _ in range(rng.randint(1, 8)))
            word = half + half[::-1] if rng.random() < 0.5 else half + rng.choice("pq") + half
            rows.append("".join(ch.upper() if rng.random() < 0.3 else ch for ch in word))
        out.append(lines(*rows))
    return out


def _is_pal(row: str) -> str:
    s = [c.lower() for c in row if c.isalnum()]
    return "YES" if s == s[::-1] else "NO"


problem(
    problem_id="palindromes",
    statement="For each line print YES if it reads the same both ways, ignoring case and non-alphanumerics.",
    inputs=_pal_inputs(random.Random(7)),
    solve=lambda text: lines(*(_is_pal(row) for row in text.splitlines())),
    correct=[
        "import sys\n"
        "for line in sys.stdin.read().splitlines():\n"
        "    s = [c.lower() for c in line if c.isalnum()]\n"
        "    print('YES' if s == s[::-1] else 'NO')\n"
    ],
    wrong=[
        (
            "import sys\n"
            "for line in sys.stdin.read().splitlines():\n"
            "    s = [c for c in line if c.isalnum()]\n"
            "    print('YES' if s == s[::-1] else 'NO')\n",
            "failed",
            "case-sensitive",
        )
    ],
)


# 8 ---------------------------------------------------------------------------------------
def _freq_inputs(rng: random.Random) -> list[str]:
    out = [lines("b a"), lines("x"), lines("b b a a"), lines("the cat the dog the end")]
    for n in (10, 30, 100, 300, 1000, 3000):
        out.append(lines(" ".join(rng.choice(WORDS[: rng.randint(2, 12)]) for _ in range(n))))
    return out


def _most_frequent(text: str) -> str:
    counts = Counter(text.split())
    top = max(counts.values())
    return lines(min(w for w, c in counts.items() if c == top), top)


problem(
    problem_id="most-frequent-word",
    statement="Words on stdin: print the most frequent one and its count; ties go to the smallest word.",
    inputs=_freq_inputs(random.Random(8)),
    solve=_most_frequent,
    correct=[
        "import sys\n"
        "from collections import Counter\n"
        "c = Counter(sys.stdin.read().split())\n"
        "top = max(c.values())\n"
        "print(min(w for w, n in c.items() if n == top))\n"
        "print(top)\n"
    ],
    wrong=[
        (
            "import sys\n"
            "from collections import Counter\n"
            "w, n = Counter(sys.stdin.read().split()).most_common(1)[0]\n"
            "print(w)\n"
            "print(n)\n",
            "failed",
            "breaks ties by first appearance",
        )
    ],
)


# 9 ---------------------------------------------------------------------------------------
def _gcd_inputs(rng: random.Random) -> list[str]:
    out = [lines(1, "1 1"), lines(1, "12 18"), lines(2, "7 13", "100 10")]
    for t, top in ((5, 100), (10, 10**4), (20, 10**6), (50, 10**9), (100, 10**12), (200, 10**6), (300, 10**15)):
        k = rng.randint(1, 1000)
        out.append(lines(t, *(f"{rng.randint(1, top) * k} {rng.randint(1, top) * k}" for _ in range(t))))
    return out


def _gcd_lcm(text: str) -> str:
    rows = text.split("\n")[1:]
    out = []
    for row in rows:
        if row.strip():
            a, b = map(int, row.split())
            g = math.gcd(a, b)
            out.append(f"{g} {a // g * b}")
    return lines(*out)


problem(
    problem_id="gcd-lcm",
    statement="T pairs of positive integers: print the gcd and lcm of each.",
    inputs=_gcd_inputs(random.Random(9)),
    solve=_gcd_lcm,
    correct=[
        "import math\n"
        "for _ in range(int(input())):\n"
        "    a, b = map(int, input().split())\n"
        "    g = math.gcd(a, b)\n"
        "    print(g, a // g * b)\n"
    ],
    wrong=[
        (
            "import math\n"
            "for _ in range(int(input())):\n"
            "    a, b = map(int, input().split())\n"
            "    print(math.gcd(a, b), a * b)\n",
            "failed",
            "lcm as the plain product",
        ),
        (
            "import math, sys\n"
            "for _ in range(int(input())):\n"
            "    a, b = map(int, input().split())\n"
            "    g = math.gcd(a, b)\n"
            "    print(g, a // g * b)\n"
            "sys.exit(1)\n",
            "error",
            "right output, then exits with code 1",
        ),
    ],
)


# 10 --------------------------------------------------------------------------------------
def _radii_inputs(rng: random.Random) -> list[str]:
    out = [lines(1, 1), lines(1, 0), lines(2, "0.5 2")]
    for q in (3, 5, 10, 20, 50, 100, 200):
        out.append(lines(q, " ".join(f"{rng.uniform(0, 1000):.4f}" for _ in range(q))))
    return out


problem(
    problem_id="circle-area",
    statement="q radii: print each circle's area (absolute or relative error up to 1e-6 accepted).",
    inputs=_radii_inputs(random.Random(10)),
    solve=lambda text: lines(*(f"{math.pi * float(r) ** 2:.6f}" for r in text.split()[1:])),
    compare="float",
    correct=[
        "import math, sys\nfor r in sys.stdin.read().split()[1:]:\n    print(f'{math.pi * float(r) ** 2:.9f}')\n",
        # a different format, same numbers: only the tolerance decides
        "import math, sys\nprint(*(math.pi * float(r) ** 2 for r in sys.stdin.read().split()[1:]))\n",
    ],
    wrong=[
        (
            "import sys\nfor r in sys.stdin.read().split()[1:]:\n    print(f'{3.14 * float(r) ** 2:.6f}')\n",
            "failed",
            "pi as 3.14: off by 5e-4 relative",
        )
    ],
)


# 11 --------------------------------------------------------------------------------------
def _mean_std(text: str) -> str:
    a = list(map(float, text.split()[1:]))
    m = sum(a) / len(a)
    return lines(f"{m:.8f} {math.sqrt(sum((x - m) ** 2 for x in a) / len(a)):.8f}")


problem(
    problem_id="mean-std",
    statement="n numbers: print their mean and population standard deviation (1e-6 tolerance).",
    inputs=[*_array_inputs(random.Random(11), 3000, -(10**4), 10**4)[1:], lines(2, "1 3"), lines(4, "2 4 4 4")],
    solve=_mean_std,
    compare="float",
    correct=[
        "import sys, statistics\n"
        "a = list(map(float, sys.stdin.read().split()[1:]))\n"
        "print(statistics.fmean(a), statistics.pstdev(a))\n"
    ],
    wrong=[
        (
            "import sys, statistics\n"
            "a = list(map(float, sys.stdin.read().split()[1:]))\n"
            "print(statistics.fmean(a), statistics.stdev(a) if len(a) > 1 else 0.0)\n",
            "failed",
            "sample standard deviation (n - 1)",
        )
    ],
)


# 12 --------------------------------------------------------------------------------------
TWO_SUM_CHECKER = '''def check(input, output, expected):
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
'''


def _two_sum_inputs(rng: random.Random) -> list[str]:
    out = [lines("2 3", "1 2"), lines("2 5", "1 2"), lines("4 8", "4 4 4 4"), lines("1 2", "1")]
    for n in (5, 10, 50, 200, 1000, 3000, 6000):
        a = [rng.randint(-1000, 1000) for _ in range(n)]
        t = a[rng.randrange(n)] + a[rng.randrange(n)] if rng.random() < 0.8 else 5000
        out.append(lines(f"{n} {t}", " ".join(map(str, a))))
    return out


def _two_sum(text: str) -> str:
    data = text.split()
    n, t = int(data[0]), int(data[1])
    a = list(map(int, data[2 : 2 + n]))
    seen: dict[int, int] = {}
    for j, x in enumerate(a):
        if t - x in seen:
            return lines(f"{seen[t - x] + 1} {j + 1}")
        seen.setdefault(x, j)
    return lines(-1)


problem(
    problem_id="two-sum-any",
    statement="n and t, then n integers: print any 1-based i < j with a_i + a_j = t, or -1 (special judge).",
    inputs=_two_sum_inputs(random.Random(12)),
    solve=_two_sum,
    checker=TWO_SUM_CHECKER,
    correct=[
        # a different pair than the reference's (the last match, not the first): the checker decides
        "import sys\n\n"
        "data = sys.stdin.read().split()\n"
        "n, t = int(data[0]), int(data[1])\n"
        "a = list(map(int, data[2 : 2 + n]))\n"
        "last = {}\n"
        "for i, x in enumerate(a):\n"
        "    last[x] = i\n"
        "for i, x in enumerate(a):\n"
        "    j = last.get(t - x)\n"
        "    if j is not None and j > i:\n"
        "        print(i + 1, j + 1)\n"
        "        break\n"
        "else:\n"
        "    print(-1)\n"
    ],
    wrong=[
        (
            "import sys\n\n"
            "data = sys.stdin.read().split()\n"
            "n, t = int(data[0]), int(data[1])\n"
            "a = list(map(int, data[2 : 2 + n]))\n"
            "seen = {}\n"
            "for j, x in enumerate(a):\n"
            "    if t - x in seen:\n"
            "        print(seen[t - x], j)\n"
            "        break\n"
            "    seen.setdefault(x, j)\n"
            "else:\n"
            "    print(-1)\n",
            "failed",
            "0-based indices",
        )
    ],
)


# 13 --------------------------------------------------------------------------------------
DERANGEMENT_CHECKER = '''def check(input, output, expected):
    """Any permutation of 1..n with p[i] != i is right; -1 exactly when none exists (n = 1)."""
    n = int(input.split()[0])
    got = output.split()
    if n == 1:
        return got == ["-1"], "n = 1 has no derangement"
    try:
        p = [int(x) for x in got]
    except ValueError:
        return False, "not integers"
    if sorted(p) != list(range(1, n + 1)):
        return False, "not a permutation of 1..n"
    return all(v != i for i, v in enumerate(p, start=1)), "some p[i] == i"
'''

problem(
    problem_id="derangement",
    statement="n: print any permutation p of 1..n with p_i != i for every i, or -1 if none exists (special judge).",
    inputs=[lines(n) for n in (1, 2, 3, 4, 5, 7, 10, 99, 1000, 4321, 20000)],
    solve=lambda text: lines(-1 if int(text) == 1 else " ".join(map(str, [*range(2, int(text) + 1), 1]))),
    checker=DERANGEMENT_CHECKER,
    correct=["n = int(input())\nprint(-1 if n == 1 else ' '.join(map(str, [n, *range(1, n)])))\n"],
    wrong=[
        (
            "n = int(input())\nprint(-1 if n == 1 else ' '.join(map(str, range(n, 0, -1))))\n",
            "failed",
            "reversal: the middle element stays in place for odd n",
        )
    ],
)


# 14 --------------------------------------------------------------------------------------
def _pairs_inputs(rng: random.Random) -> list[str]:
    out = [lines(1, 1), lines(2, "3 3"), lines(4, "1 2 1 2")]
    for n, k in ((10, 3), (50, 10), (200, 20), (300, 50), (2000, 5), (3000, 100), (4000, 10)):
        out.append(lines(n, " ".join(str(rng.randint(1, k)) for _ in range(n))))
    return out


problem(
    problem_id="equal-pairs",
    statement="n integers (n <= 4000): how many pairs i < j have a_i == a_j. Memory limit 64 MiB.",
    inputs=_pairs_inputs(random.Random(14)),
    solve=lambda text: lines(sum(c * (c - 1) // 2 for c in Counter(text.split()[1:]).values())),
    correct=[
        "import sys\n"
        "from collections import Counter\n"
        "print(sum(c * (c - 1) // 2 for c in Counter(sys.stdin.read().split()[1:]).values()))\n"
    ],
    wrong=[
        (
            "import sys\n"
            "a = sys.stdin.read().split()[1:]\n"
            "pairs = [(i, j) for i in range(len(a)) for j in range(i + 1, len(a))]\n"
            "print(sum(1 for i, j in pairs if a[i] == a[j]))\n",
            "oom",
            "materialises every pair: millions of tuples",
        )
    ],
)


# 15 --------------------------------------------------------------------------------------
def _tree_inputs(rng: random.Random) -> list[str]:
    out = [lines(1, 0), lines(2, "0 1"), lines(3, "0 1 1")]
    for n in (10, 100, 1000, 5000):
        out.append(lines(n, " ".join(["0", *(str(rng.randint(1, i)) for i in range(1, n))])))
    for n in (2000, 5000, 20000):  # chains: deep recursion
        out.append(lines(n, " ".join(["0", *(str(i) for i in range(1, n))])))
    return out


def _depth(text: str) -> str:
    p = list(map(int, text.split()[1:]))
    depth = [0] * (len(p) + 1)
    for v in range(2, len(p) + 1):
        depth[v] = depth[p[v - 1]] + 1
    return lines(max(depth[1:]))


problem(
    problem_id="tree-depth",
    statement="n, then parents p_1..p_n (p_1 = 0, p_v < v): the depth of the tree (the root has depth 0).",
    inputs=_tree_inputs(random.Random(15)),
    solve=_depth,
    correct=[
        "import sys\n"
        "p = list(map(int, sys.stdin.read().split()[1:]))\n"
        "depth = [0] * (len(p) + 1)\n"
        "for v in range(2, len(p) + 1):\n"
        "    depth[v] = depth[p[v - 1]] + 1\n"
        "print(max(depth[1:]))\n"
    ],
    wrong=[
        (
            "import sys\n"
            "p = list(map(int, sys.stdin.read().split()[1:]))\n"
            "children = [[] for _ in range(len(p) + 1)]\n"
            "for v in range(2, len(p) + 1):\n"
            "    children[p[v - 1]].append(v)\n"
            "def height(v):\n"
            "    return max((1 + height(c) for c in children[v]), default=0)\n"
            "print(height(1))\n",
            "error",
            "recursion: RecursionError on deep chains",
        )
    ],
)


# 16 --------------------------------------------------------------------------------------
def _avg_inputs(rng: random.Random) -> list[str]:
    out = [lines(1, "1 5"), lines(2, "2 1 2", "3 1 1 1"), lines(1, "0"), lines(3, "0", "1 7", "0")]
    for t in (5, 10, 20, 50, 100, 200):
        rows = []
        for _ in range(t):
            k = rng.choice([0, *range(1, 20)])
            rows.append(" ".join(map(str, [k, *(rng.randint(0, 100) for _ in range(k))])))
        out.append(lines(t, *rows))
    return out


def _averages(text: str) -> str:
    rows = text.splitlines()[1:]
    out = []
    for row in rows:
        k, *xs = map(int, row.split())
        out.append(sum(xs) // k if k else 0)
    return lines(*out)


problem(
    problem_id="average-or-zero",
    statement="T lists (k, then k integers): print each list's average rounded down, or 0 for an empty list.",
    inputs=_avg_inputs(random.Random(16)),
    solve=_averages,
    correct=[
        "for _ in range(int(input())):\n    k, *xs = map(int, input().split())\n    print(sum(xs) // k if k else 0)\n"
    ],
    wrong=[
        (
            "for _ in range(int(input())):\n    k, *xs = map(int, input().split())\n    print(sum(xs) // k)\n",
            "error",
            "ZeroDivisionError on an empty list",
        )
    ],
)


# 17 --------------------------------------------------------------------------------------
def _matrix_inputs(rng: random.Random) -> list[str]:
    out = [lines("1 1", "5"), lines("1 3", "1 2 3"), lines("2 2", "1 2", "2 1")]
    for r, c in ((2, 3), (3, 2), (4, 4), (5, 9), (10, 3), (30, 40), (100, 100)):
        out.append(lines(f"{r} {c}", *(" ".join(str(rng.randint(-9, 9)) for _ in range(c)) for _ in range(r))))
    return out


def _transpose(text: str) -> str:
    rows = text.splitlines()
    r, c = map(int, rows[0].split())
    m = [rows[1 + i].split() for i in range(r)]
    return lines(*(" ".join(m[i][j] for i in range(r)) for j in range(c)))


problem(
    problem_id="matrix-transpose",
    statement="r and c, then an r x c matrix: print its transpose.",
    inputs=_matrix_inputs(random.Random(17)),
    solve=_transpose,
    correct=[
        "r, c = map(int, input().split())\n"
        "m = [input().split() for _ in range(r)]\n"
        "for row in zip(*m):\n"
        "    print(*row)\n"
    ],
    wrong=[
        (
            "r, c = map(int, input().split())\nfor _ in range(r):\n    print(input())\n",
            "failed",
            "prints the matrix as it is",
        )
    ],
)


# 18 --------------------------------------------------------------------------------------
def _brackets_inputs(rng: random.Random) -> list[str]:
    fixed = ["()", "([])", "(]", "([)]", "{[()()]}", "((", "", "}{"]
    out = [lines(*fixed[:3]), lines(*fixed[3:6]), lines(*fixed)]
    for n in (5, 10, 20, 50, 100, 200, 400):
        rows = []
        for _ in range(n):
            s = []
            stack: list[str] = []
            for _ in range(rng.randint(1, 30)):
                if stack and rng.random() < 0.5:
                    s.append({"(": ")", "[": "]", "{": "}"}[stack.pop()])
                else:
                    ch = rng.choice("([{")
                    stack.append(ch)
                    s.append(ch)
            s.extend({"(": ")", "[": "]", "{": "}"}[ch] for ch in reversed(stack))
            if rng.random() < 0.4:
                i = rng.randrange(len(s))
                s[i] = {"(": "[", "[": "(", "{": "(", ")": "]", "]": ")", "}": ")"}[s[i]]
            rows.append("".join(s))
        out.append(lines(*rows))
    return out


def _balanced(row: str) -> str:
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[str] = []
    for ch in row:
        if ch in "([{":
            stack.append(ch)
        elif not stack or stack.pop() != pairs[ch]:
            return "NO"
    return "NO" if stack else "YES"


problem(
    problem_id="balanced-brackets",
    statement="Lines of ()[]{}: print YES for each balanced line, NO otherwise.",
    inputs=_brackets_inputs(random.Random(18)),
    solve=lambda text: lines(*(_balanced(row) for row in text.split("\n")[:-1])),
    correct=[
        "import sys\n"
        "pairs = {')': '(', ']': '[', '}': '{'}\n"
        "for line in sys.stdin.read().split('\\n')[:-1]:\n"
        "    stack = []\n"
        "    ok = True\n"
        "    for ch in line:\n"
        "        if ch in '([{':\n"
        "            stack.append(ch)\n"
        "        elif not stack or stack.pop() != pairs[ch]:\n"
        "            ok = False\n"
        "            break\n"
        "    print('YES' if ok and not stack else 'NO')\n"
    ],
    wrong=[
        (
            "import sys\n"
            "for line in sys.stdin.read().split('\\n')[:-1]:\n"
            "    depth = 0\n"
            "    ok = True\n"
            "    for ch in line:\n"
            "        depth += 1 if ch in '([{' else -1\n"
            "        ok = ok and depth >= 0\n"
            "    print('YES' if ok and depth == 0 else 'NO')\n",
            "failed",
            "counts depth only, ignoring the bracket types",
        )
    ],
)


# 19 --------------------------------------------------------------------------------------
def _queries_inputs(rng: random.Random) -> list[str]:
    out = [lines("1 1", "5", "5"), lines("3 3", "1 2 3", "0 2 9"), lines("2 2", "4 4", "3 4")]
    for n, q in ((10, 10), (50, 20), (200, 100), (500, 700), (1000, 1000), (3000, 3000), (10000, 10000)):
        a = " ".join(str(rng.randint(0, 10**6)) for _ in range(n))
        out.append(lines(f"{n} {q}", a, " ".join(str(rng.randint(0, 10**6)) for _ in range(q))))
    return out


def _count_le(text: str) -> str:
    import bisect

    data = text.split()
    n, q = int(data[0]), int(data[1])
    a = sorted(map(int, data[2 : 2 + n]))
    return lines(*(bisect.bisect_right(a, int(x)) for x in data[2 + n : 2 + n + q]))


problem(
    problem_id="count-le",
    statement="n and q, n integers, q queries x: for each query, how many of the integers are <= x.",
    inputs=_queries_inputs(random.Random(19)),
    solve=_count_le,
    correct=[
        "import sys, bisect\n"
        "data = sys.stdin.read().split()\n"
        "n, q = int(data[0]), int(data[1])\n"
        "a = sorted(map(int, data[2:2 + n]))\n"
        "print('\\n'.join(str(bisect.bisect_right(a, int(x))) for x in data[2 + n:2 + n + q]))\n"
    ],
    wrong=[
        (
            "import sys, bisect\n"
            "data = sys.stdin.read().split()\n"
            "n, q = int(data[0]), int(data[1])\n"
            "a = sorted(map(int, data[2:2 + n]))\n"
            "print('\\n'.join(str(bisect.bisect_left(a, int(x))) for x in data[2 + n:2 + n + q]))\n",
            "failed",
            "counts < x instead of <= x",
        )
    ],
)


# 20 --------------------------------------------------------------------------------------
def _lis(text: str) -> str:
    import bisect

    tails: list[int] = []
    for x in map(int, text.split()[1:]):
        i = bisect.bisect_left(tails, x)
        tails[i : i + 1] = [x]
    return lines(len(tails))


problem(
    problem_id="lis-length",
    statement="n integers: the length of their longest strictly increasing subsequence.",
    inputs=[*_array_inputs(random.Random(20), 10000, 0, 50), lines(5, "2 2 2 2 2")],
    solve=_lis,
    correct=[
        "import sys, bisect\n"
        "tails = []\n"
        "for x in map(int, sys.stdin.read().split()[1:]):\n"
        "    i = bisect.bisect_left(tails, x)\n"
        "    tails[i:i + 1] = [x]\n"
        "print(len(tails))\n"
    ],
    wrong=[
        (
            "import sys, bisect\n"
            "tails = []\n"
            "for x in map(int, sys.stdin.read().split()[1:]):\n"
            "    i = bisect.bisect_right(tails, x)\n"
            "    tails[i:i + 1] = [x]\n"
            "print(len(tails))\n",
            "failed",
            "non-decreasing instead of strictly increasing",
        )
    ],
)


# 21 --------------------------------------------------------------------------------------
def _grid_inputs(rng: random.Random) -> list[str]:
    out = [lines("1 1", "."), lines("2 2", "..", ".."), lines("2 2", ".#", "#."), lines("3 3", "...", "##.", "...")]
    for r, c, wall in ((5, 5, 0.2), (10, 10, 0.25), (20, 30, 0.3), (50, 50, 0.3), (100, 100, 0.25), (200, 200, 0.2)):
        rows = ["".join("#" if rng.random() < wall else "." for _ in range(c)) for _ in range(r)]
        rows[0] = "." + rows[0][1:]
        rows[-1] = rows[-1][:-1] + "."
        out.append(lines(f"{r} {c}", *rows))
    return out


def _grid(text: str) -> str:
    rows = text.split()
    r, c = int(rows[0]), int(rows[1])
    g = rows[2 : 2 + r]
    dist = {(0, 0): 0}
    todo = deque([(0, 0)])
    while todo:
        y, x = todo.popleft()
        for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
            if 0 <= ny < r and 0 <= nx < c and g[ny][nx] == "." and (ny, nx) not in dist:
                dist[ny, nx] = dist[y, x] + 1
                todo.append((ny, nx))
    return lines(dist.get((r - 1, c - 1), -1))


problem(
    problem_id="grid-path",
    statement="An r x c grid of . and #: the fewest steps from the top-left to the bottom-right cell, or -1.",
    inputs=_grid_inputs(random.Random(21)),
    solve=_grid,
    correct=[
        "import sys\n"
        "from collections import deque\n"
        "rows = sys.stdin.read().split()\n"
        "r, c = int(rows[0]), int(rows[1])\n"
        "g = rows[2:2 + r]\n"
        "dist = [[-1] * c for _ in range(r)]\n"
        "dist[0][0] = 0\n"
        "todo = deque([(0, 0)])\n"
        "while todo:\n"
        "    y, x = todo.popleft()\n"
        "    for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):\n"
        "        if 0 <= ny < r and 0 <= nx < c and g[ny][nx] == '.' and dist[ny][nx] < 0:\n"
        "            dist[ny][nx] = dist[y][x] + 1\n"
        "            todo.append((ny, nx))\n"
        "print(dist[r - 1][c - 1])\n"
    ],
    wrong=[
        (
            "r, c = map(int, input().split())\nprint(r + c - 2)\n",
            "failed",
            "the Manhattan distance, walls ignored",
        )
    ],
)


# 22 --------------------------------------------------------------------------------------
def _rle_inputs(rng: random.Random) -> list[str]:
    out = [lines("a"), lines("aaab"), lines("abc", "zzzzzz")]
    for n in (3, 5, 10, 20, 50, 100, 300):
        out.append(
            lines(*("".join(rng.choice("ab") * rng.randint(1, 5) for _ in range(rng.randint(1, 10))) for _ in range(n)))
        )
    return out


def _rle(row: str) -> str:
    out, i = [], 0
    while i < len(row):
        j = i
        while j < len(row) and row[j] == row[i]:
            j += 1
        out.append(f"{row[i]}{j - i}")
        i = j
    return "".join(out)


problem(
    problem_id="run-length",
    statement="Encode each line as runs: 'aaab' becomes 'a3b1'.",
    inputs=_rle_inputs(random.Random(22)),
    solve=lambda text: lines(*(_rle(row) for row in text.splitlines())),
    compare="exact",
    correct=[
        "import sys\n"
        "from itertools import groupby\n"
        "for line in sys.stdin.read().splitlines():\n"
        "    print(''.join(f'{k}{len(list(g))}' for k, g in groupby(line)))\n"
    ],
    wrong=[
        (
            "import sys\n"
            "for line in sys.stdin.read().splitlines():\n"
            "    out, n = [], 1\n"
            "    for a, b in zip(line, line[1:]):\n"
            "        if a == b:\n"
            "            n += 1\n"
            "        else:\n"
            "            out.append(f'{a}{n}')\n"
            "            n = 1\n"
            "    print(''.join(out))\n",
            "failed",
            "drops the last run",
        )
    ],
)


# 23 --------------------------------------------------------------------------------------
def _roman(n: int) -> str:
    out = []
    for v, s in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
                 (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):  # fmt: skip
        while n >= v:
            out.append(s)
            n -= v
    return "".join(out)


problem(
    problem_id="roman",
    statement="q numbers in 1..3999: print each in Roman numerals.",
    inputs=[lines(1, 1), lines(1, 4), lines(3, "9 14 40"), lines(2, "3999 1994")]
    + [
        lines(q, " ".join(str(random.Random(23 + q).randint(1, 3999)) for _ in range(q)))
        for q in (5, 10, 20, 50, 100, 500)
    ],
    solve=lambda text: lines(*(_roman(int(x)) for x in text.split()[1:])),
    correct=[
        "import sys\n"
        "V = [(1000, 'M'), (900, 'CM'), (500, 'D'), (400, 'CD'), (100, 'C'), (90, 'XC'), (50, 'L'), (40, 'XL'),\n"
        "     (10, 'X'), (9, 'IX'), (5, 'V'), (4, 'IV'), (1, 'I')]\n"
        "for x in sys.stdin.read().split()[1:]:\n"
        "    n, out = int(x), ''\n"
        "    for v, s in V:\n"
        "        k, n = divmod(n, v)\n"
        "        out += s * k\n"
        "    print(out)\n"
    ],
    wrong=[
        (
            "import sys\n"
            "V = [(1000, 'M'), (500, 'D'), (100, 'C'), (50, 'L'), (10, 'X'), (5, 'V'), (1, 'I')]\n"
            "for x in sys.stdin.read().split()[1:]:\n"
            "    n, out = int(x), ''\n"
            "    for v, s in V:\n"
            "        k, n = divmod(n, v)\n"
            "        out += s * k\n"
            "    print(out)\n",
            "failed",
            "no subtractive forms (IIII for 4)",
        )
    ],
)


# 24 --------------------------------------------------------------------------------------
problem(
    problem_id="echo-lines",
    statement="Print the input unchanged.",
    inputs=_words_inputs(random.Random(24)),
    solve=lambda text: text,
    compare="exact",
    correct=["import sys\nsys.stdout.write(sys.stdin.read())\n"],
    wrong=[
        (
            "import sys\ntext = sys.stdin.read()\nwhile True:\n    sys.stdout.write(text)\n",
            "output_limit",
            "echoes forever",
        )
    ],
)


# -- writing ------------------------------------------------------------------------------
def problem_line(p: Problem) -> dict[str, object]:
    line: dict[str, object] = {
        "problem_id": p.problem_id,
        "tests": [{"input": text, "output": p.solve(text)} for text in p.inputs],
    }
    if p.compare is not None:
        line["compare"] = p.compare
    if p.checker is not None:
        line["checker"] = p.checker
    line |= {"time_limit_s": p.time_limit_s, "memory_bytes": p.memory_bytes, "meta": {"statement": p.statement}}
    return line


def sample_lines(p: Problem) -> list[dict[str, object]]:
    out: list[dict[str, object]] = [
        {"problem_id": p.problem_id, "program": src, "expect": "passed", "note": "correct"} for src in p.correct
    ]
    out += [{"problem_id": p.problem_id, "program": src, "expect": want, "note": why} for src, want, why in p.wrong]
    return out


def write_suite(folder: Path, p: Problem, *, as_files: bool) -> None:
    """A suite folder for `verifier check`: cases as files (cases/NAME.in + .out) or as cases.jsonl."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    program = [f'compare = "{p.compare or ("checker" if p.checker else "tokens")}"']
    if p.checker is not None:
        program.append('checker = "checker.py"')
        (folder / "checker.py").write_text(p.checker)
    if not as_files:
        program.append('cases = "cases.jsonl"')
    program += [f"time_limit_s = {p.time_limit_s}", f"memory_bytes = {p.memory_bytes}"]
    (folder / "suite.toml").write_text(
        f'kind = "program"\nname = "{p.problem_id}"\n\n[program]\n' + "\n".join(program) + "\n"
    )
    if as_files:
        (folder / "cases").mkdir()
        for i, text in enumerate(p.inputs, start=1):
            (folder / "cases" / f"{i}.in").write_text(text)
            (folder / "cases" / f"{i}.out").write_text(p.solve(text))
    else:
        with open(folder / "cases.jsonl", "w") as fh:
            for i, text in enumerate(p.inputs, start=1):
                fh.write(json.dumps({"name": str(i), "input": text, "output": p.solve(text)}) + "\n")


def main() -> None:
    assert len(PROBLEMS) >= 20 and all(len(p.inputs) >= 10 for p in PROBLEMS)
    with open(HERE / "problems.jsonl", "w") as fh:
        for p in PROBLEMS:
            fh.write(json.dumps(problem_line(p)) + "\n")
    with open(HERE / "samples.jsonl", "w") as fh:
        for p in PROBLEMS:
            for line in sample_lines(p):
                fh.write(json.dumps(line) + "\n")
    by_id = {p.problem_id: p for p in PROBLEMS}
    for name, as_files in (("a-plus-b", True), ("two-sum-any", False)):
        p = by_id[name]
        folder = HERE / name.replace("-", "_")
        write_suite(folder / "suite", p, as_files=as_files)
        (folder / "good.py").write_text(p.correct[0])
        (folder / "wrong.py").write_text(p.wrong[0][0])
    samples = sum(len(p.correct) + len(p.wrong) for p in PROBLEMS)
    print(f"{len(PROBLEMS)} problems, {sum(len(p.inputs) for p in PROBLEMS)} cases, {samples} samples")


if __name__ == "__main__":
    main()
