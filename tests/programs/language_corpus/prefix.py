"""`prefix`: n, then n integers up to 10^12; print every prefix sum on its own line (64-bit,
multi-line output)."""

from __future__ import annotations

from . import mutated

NAME = "prefix"
CASES = [
    ("3\n1 2 3\n", "1\n3\n6\n"),
    ("1\n-7\n", "-7\n"),
    (
        "4\n1000000000000 1000000000000 -1 1000000000000\n",
        "1000000000000\n2000000000000\n1999999999999\n2999999999999\n",
    ),
    ("5\n5 -5 5\n-5 5\n", "5\n0\n5\n0\n5\n"),
]

PY = r"""
import sys

data = sys.stdin.read().split()
n = int(data[0])
s = 0
out = []
for tok in data[1 : n + 1]:
    s += int(tok)
    out.append(str(s))
print("\n".join(out))
"""
C = r"""
#include <stdio.h>
int main(void) {
    int n;
    long long s = 0, x;
    if (scanf("%d", &n) != 1) return 0;
    for (int i = 0; i < n; i++) {
        scanf("%lld", &x);
        s += x;
        printf("%lld\n", s);
    }
    return 0;
}
"""
CPP = r"""
#include <bits/stdc++.h>
using namespace std;
int main() {
    ios::sync_with_stdio(false);
    int n;
    cin >> n;
    long long s = 0;
    for (int i = 0; i < n; i++) {
        long long x;
        cin >> x;
        s += x;
        cout << s << '\n';
    }
}
"""
JAVA = r"""
import java.io.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder all = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) all.append(line).append(' ');
        String[] t = all.toString().trim().split("\\s+");
        int n = Integer.parseInt(t[0]);
        long s = 0;
        StringBuilder out = new StringBuilder();
        for (int i = 1; i <= n; i++) {
            s += Long.parseLong(t[i]);
            out.append(s).append('\n');
        }
        System.out.print(out);
    }
}
"""
JS = r"""
const t = require('fs').readFileSync(0, 'utf8').split(/\s+/).filter(Boolean);
const n = Number(t[0]);
let s = 0n;
const out = [];
for (let i = 1; i <= n; i++) {
  s += BigInt(t[i]);
  out.push(s.toString());
}
console.log(out.join('\n'));
"""
GO = r"""
package main

import (
	"bufio"
	"fmt"
	"os"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var n int
	fmt.Fscan(in, &n)
	var s int64
	for i := 0; i < n; i++ {
		var x int64
		fmt.Fscan(in, &x)
		s += x
		fmt.Fprintln(out, s)
	}
}
"""
RUST = r"""
use std::io::{Read, Write};
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let mut it = s.split_whitespace();
    let n: usize = it.next().unwrap().parse().unwrap();
    let mut total: i64 = 0;
    let mut out = String::new();
    for _ in 0..n {
        total += it.next().unwrap().parse::<i64>().unwrap();
        out.push_str(&format!("{}\n", total));
    }
    std::io::stdout().write_all(out.as_bytes()).unwrap();
}
"""
BASH = r"""
read -r n
a=()
while read -r -a row; do a+=("${row[@]}"); done
s=0
for ((i = 0; i < n; i++)); do
  s=$((s + a[i]))
  echo "$s"
done
"""
CORRECT = {"python": PY, "c": C, "cpp": CPP, "java": JAVA, "nodejs": JS, "go": GO, "rust": RUST, "bash": BASH}
WRONG_ANSWER = {
    "python": mutated(PY, "data[1 : n + 1]", "data[1:n]"),  # the last number lost
    "c": mutated(C, 's += x;\n        printf("%lld\\n", s);', 'printf("%lld\\n", s);\n        s += x;'),  # exclusive
    "cpp": mutated(CPP, "long long s = 0;", "int s = 0;"),  # 32 bits
    "java": mutated(JAVA, "i <= n;", "i < n;"),
    "nodejs": mutated(JS, "out.push(s.toString());", "out.push(String(Number(s) | 0));"),  # 32 bits
    "go": mutated(GO, "s += x\n\t\tfmt.Fprintln(out, s)", "fmt.Fprintln(out, s)\n\t\ts += x"),
    "rust": mutated(RUST, "for _ in 0..n", "for _ in 1..n"),
    "bash": mutated(BASH, "while read -r -a row; do", "while read -r -a row && ((${#a[@]} < 3)); do"),  # stops early
}
