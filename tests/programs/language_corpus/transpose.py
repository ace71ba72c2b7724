"""`transpose`: an r x c matrix of integers, printed transposed: c lines of r numbers separated
by one space, compared exactly (`compare = "exact"`: a trailing space is a wrong answer)."""

from __future__ import annotations

from . import mutated

NAME = "transpose"
COMPARE = "exact"
CASES = [
    ("2 3\n1 2 3\n4 5 6\n", "1 4\n2 5\n3 6\n"),
    ("1 1\n7\n", "7\n"),
    ("3 1\n1\n2\n3\n", "1 2 3\n"),
    ("2 2\n-1 0\n10 200\n", "-1 10\n0 200\n"),
]

PY = r"""
import sys

data = sys.stdin.read().split()
r, c = int(data[0]), int(data[1])
m = [data[2 + i * c : 2 + (i + 1) * c] for i in range(r)]
for j in range(c):
    print(" ".join(m[i][j] for i in range(r)))
"""
C = r"""
#include <stdio.h>
static long long m[500][500];
int main(void) {
    int r, c;
    if (scanf("%d %d", &r, &c) != 2) return 0;
    for (int i = 0; i < r; i++)
        for (int j = 0; j < c; j++) scanf("%lld", &m[i][j]);
    for (int j = 0; j < c; j++)
        for (int i = 0; i < r; i++) printf("%lld%c", m[i][j], i + 1 < r ? ' ' : '\n');
    return 0;
}
"""
CPP = r"""
#include <bits/stdc++.h>
using namespace std;
int main() {
    int r, c;
    cin >> r >> c;
    vector<vector<long long>> m(r, vector<long long>(c));
    for (auto &row : m)
        for (auto &v : row) cin >> v;
    for (int j = 0; j < c; j++) {
        for (int i = 0; i < r; i++) {
            if (i) cout << ' ';
            cout << m[i][j];
        }
        cout << '\n';
    }
}
"""
JAVA = r"""
import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer in = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        in.nextToken();
        int r = (int) in.nval;
        in.nextToken();
        int c = (int) in.nval;
        long[][] m = new long[r][c];
        for (int i = 0; i < r; i++)
            for (int j = 0; j < c; j++) {
                in.nextToken();
                m[i][j] = (long) in.nval;
            }
        StringBuilder out = new StringBuilder();
        for (int j = 0; j < c; j++) {
            StringJoiner line = new StringJoiner(" ");
            for (int i = 0; i < r; i++) line.add(Long.toString(m[i][j]));
            out.append(line).append('\n');
        }
        System.out.print(out);
    }
}
"""
JS = r"""
const t = require('fs').readFileSync(0, 'utf8').split(/\s+/).filter(Boolean);
const r = Number(t[0]), c = Number(t[1]);
const lines = [];
for (let j = 0; j < c; j++) {
  const row = [];
  for (let i = 0; i < r; i++) row.push(t[2 + i * c + j]);
  lines.push(row.join(' '));
}
console.log(lines.join('\n'));
"""
GO = r"""
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	var r, c int
	fmt.Fscan(in, &r, &c)
	m := make([][]string, r)
	for i := range m {
		m[i] = make([]string, c)
		for j := range m[i] {
			fmt.Fscan(in, &m[i][j])
		}
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for j := 0; j < c; j++ {
		col := make([]string, r)
		for i := 0; i < r; i++ {
			col[i] = m[i][j]
		}
		fmt.Fprintln(out, strings.Join(col, " "))
	}
}
"""
RUST = r"""
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let t: Vec<&str> = s.split_whitespace().collect();
    let r: usize = t[0].parse().unwrap();
    let c: usize = t[1].parse().unwrap();
    let mut out = String::new();
    for j in 0..c {
        let col: Vec<&str> = (0..r).map(|i| t[2 + i * c + j]).collect();
        out.push_str(&col.join(" "));
        out.push('\n');
    }
    print!("{}", out);
}
"""
BASH = r"""
read -r r c
m=()
for ((i = 0; i < r; i++)); do
  read -r -a row
  m+=("${row[@]}")
done
for ((j = 0; j < c; j++)); do
  line=""
  for ((i = 0; i < r; i++)); do
    line+="${line:+ }${m[i * c + j]}"
  done
  echo "$line"
done
"""
CORRECT = {"python": PY, "c": C, "cpp": CPP, "java": JAVA, "nodejs": JS, "go": GO, "rust": RUST, "bash": BASH}
WRONG_ANSWER = {
    # a space after every number: the same tokens, not the same bytes
    "python": mutated(
        PY, 'print(" ".join(m[i][j] for i in range(r)))', 'print("".join(m[i][j] + " " for i in range(r)))'
    ),
    "c": mutated(C, "m[i][j], i + 1 < r", "m[j][i], i + 1 < r"),  # not transposed
    "cpp": mutated(CPP, "if (i) cout << ' ';\n            cout << m[i][j];", "cout << m[i][j] << ' ';"),
    "java": mutated(JAVA, "line.add(Long.toString(m[i][j]))", 'line.add(Long.toString(m[i][j]) + " ")'),
    "nodejs": mutated(JS, "row.push(t[2 + i * c + j])", "row.push(t[2 + j * r + i])"),  # row-major mix-up
    "go": mutated(GO, 'strings.Join(col, " ")', 'strings.Join(col, "  ")'),
    "rust": mutated(RUST, "out.push('\\n');", 'out.push_str(" \\n");'),
    "bash": mutated(BASH, 'line+="${line:+ }${m[i * c + j]}"', 'line+="${m[i * c + j]} "'),
}
