"""`sum`: n, then n integers (64-bit sums); every kind of wrong solution in every language."""

from __future__ import annotations

from . import Solution, mutated, solution

NAME = "sum"
CASES = [
    ("3\n1 2 3\n", "6\n"),
    ("1\n0\n", "0\n"),
    ("3\n2000000000 2000000000 2000000000\n", "6000000000\n"),
    ("4\n-5 10 -20 7\n", "-8\n"),
]

PY_SUM = """
import sys

data = sys.stdin.read().split()
n = int(data[0])
print(sum(int(x) for x in data[1 : n + 1]))
"""
C_SUM = """
#include <stdio.h>
int main(void) {
    int n; long long s = 0, x;
    if (scanf("%d", &n) != 1) return 0;
    for (int i = 0; i < n; i++) { scanf("%lld", &x); s += x; }
    printf("%lld\\n", s);
    return 0;
}
"""
C_SUM_WRONG = C_SUM.replace("long long s = 0, x;", "int s = 0, x;").replace("%lld", "%d")
CPP_SUM = """
#include <bits/stdc++.h>
using namespace std;
int main() {
    ios::sync_with_stdio(false);
    int n; long long s = 0, x;
    cin >> n;
    for (int i = 0; i < n; i++) { cin >> x; s += x; }
    cout << s << "\\n";
}
"""
JAVA_SUM = """
import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(in.readLine());
        int n = Integer.parseInt(st.nextToken());
        st = new StringTokenizer(in.readLine());
        long s = 0;
        for (int i = 0; i < n; i++) s += Long.parseLong(st.nextToken());
        System.out.println(s);
    }
}
"""
JS_SUM = """
const d = require('fs').readFileSync(0, 'utf8').split(/\\s+/).filter(Boolean);
const n = Number(d[0]);
let s = 0n;
for (let i = 1; i <= n; i++) s += BigInt(d[i]);
console.log(s.toString());
"""
RUST_SUM = """
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let mut it = s.split_whitespace();
    let n: usize = it.next().unwrap().parse().unwrap();
    let mut total: i64 = 0;
    for _ in 0..n { total += it.next().unwrap().parse::<i64>().unwrap(); }
    println!("{}", total);
}
"""
GO_SUM = """
package main

import (
	"bufio"
	"fmt"
	"os"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	var n int
	fmt.Fscan(in, &n)
	var s, x int64
	for i := 0; i < n; i++ {
		fmt.Fscan(in, &x)
		s += x
	}
	fmt.Println(s)
}
"""
BASH_SUM = """
read -r n
read -r -a a
s=0
for x in "${a[@]}"; do s=$((s + x)); done
echo "$s"
"""
SOLUTIONS: list[Solution] = [
    # Python
    solution(NAME, "python", "ok", PY_SUM),
    solution(NAME, "python", "wrong_answer", mutated(PY_SUM, "data[1 : n + 1]", "data[1:n]")),
    solution(NAME, "python", "timeout", "while True:\n    pass\n"),
    solution(NAME, "python", "runtime_error", "n = int(input())\nprint(n // 0)\n"),
    solution(NAME, "python", "compile_error", "print(sum(\n"),
    # C
    solution(NAME, "c", "ok", C_SUM),
    solution(NAME, "c", "wrong_answer", C_SUM_WRONG),
    solution(NAME, "c", "timeout", "int main(void) { volatile unsigned long i = 0; for (;;) i++; }\n"),
    solution(NAME, "c", "runtime_error", "#include <stdlib.h>\nint main(void) { abort(); }\n"),
    solution(NAME, "c", "compile_error", "int main(void) { return 0 }\n"),
    # C++
    solution(NAME, "cpp", "ok", CPP_SUM),
    solution(NAME, "cpp", "wrong_answer", CPP_SUM.replace("long long s = 0, x;", "int s = 0, x;")),
    solution(NAME, "cpp", "timeout", "int main() { volatile unsigned long i = 0; for (;;) i++; }\n"),
    solution(
        NAME,
        "cpp",
        "runtime_error",
        "#include <vector>\nint main() { std::vector<int> v; return v.at(3); }\n",
    ),
    solution(NAME, "cpp", "compile_error", "int main() { undeclared(); }\n"),
    # Java
    solution(NAME, "java", "ok", JAVA_SUM),
    solution(
        NAME,
        "java",
        "wrong_answer",
        JAVA_SUM.replace("long s = 0;", "int s = 0;").replace("s += Long.parseLong", "s += Integer.parseInt"),
    ),
    solution(
        NAME,
        "java",
        "timeout",
        "public class Main { public static void main(String[] a) { long i = 0; while (true) { i++; } } }\n",
    ),
    solution(
        NAME,
        "java",
        "runtime_error",
        "public class Main { public static void main(String[] a) { int[] x = new int[1]; x[2] = 1; } }\n",
    ),
    solution(
        NAME,
        "java",
        "compile_error",
        'public class Main { public static void main(String[] a) { int x = "s"; } }\n',
    ),
    # JavaScript (nodejs)
    solution(NAME, "nodejs", "ok", JS_SUM),
    solution(NAME, "nodejs", "wrong_answer", JS_SUM.replace("s.toString()", "(s + 1n).toString()")),
    solution(NAME, "nodejs", "timeout", "while (true) {}\n"),
    solution(NAME, "nodejs", "runtime_error", "null.x = 1;\n"),
    solution(NAME, "nodejs", "compile_error", "function (\n"),
    # Rust
    solution(NAME, "rust", "ok", RUST_SUM),
    solution(NAME, "rust", "wrong_answer", RUST_SUM.replace("i64", "i32")),
    solution(
        NAME,
        "rust",
        "timeout",
        "fn main() { let mut i: u64 = 0; loop { unsafe { std::ptr::write_volatile(&mut i, i.wrapping_add(1)) } } }\n",
    ),
    solution(NAME, "rust", "runtime_error", 'fn main() { panic!("no"); }\n'),
    solution(NAME, "rust", "compile_error", 'fn main() { let x: i32 = "s"; }\n'),
    # Go
    solution(NAME, "go", "ok", GO_SUM),
    solution(NAME, "go", "wrong_answer", GO_SUM.replace("var s, x int64", "var s, x int32")),
    solution(NAME, "go", "timeout", "package main\n\nfunc main() {\n\tfor {\n\t}\n}\n"),
    solution(
        NAME,
        "go",
        "runtime_error",
        'package main\n\nfunc main() {\n\tvar m map[string]int\n\tm["a"] = 1\n}\n',
    ),
    solution(NAME, "go", "compile_error", "package main\n\nfunc main() {\n\tx := 1\n}\n"),
    # Bash
    solution(NAME, "bash", "ok", BASH_SUM),
    solution(NAME, "bash", "wrong_answer", BASH_SUM.replace("s=$((s + x))", "s=$x")),
    solution(NAME, "bash", "timeout", "while :; do :; done\n"),
    solution(NAME, "bash", "runtime_error", "exit 3\n"),
    solution(NAME, "bash", "compile_error", "if then fi (\n"),
]
