"""A correctness corpus for programs in other languages (issue 36): stdin/stdout problems, and per
language a correct solution of each and wrong ones (a wrong answer, a time limit, a runtime
error, a compile error), each with the status it must get. Used by the sandbox's test
(`test_languages_docker.py`) and by the plain judge (`bench/languages_plain.py`), which must agree.

An interpreted language has no compile step: its "compile error" (a syntax error) is the runtime
error its interpreter exits with, as judges report it."""

from __future__ import annotations

from dataclasses import dataclass

#: name -> [(input, expected output)]
PROBLEMS: dict[str, list[tuple[str, str]]] = {
    "sum": [
        ("3\n1 2 3\n", "6\n"),
        ("1\n0\n", "0\n"),
        ("3\n2000000000 2000000000 2000000000\n", "6000000000\n"),
        ("4\n-5 10 -20 7\n", "-8\n"),
    ],
    "reverse": [
        ("a b c\n", "c b a\n"),
        ("hello\n", "hello\n"),
        ("one  two   three\n", "three two one\n"),
    ],
}


@dataclass(frozen=True)
class Solution:
    problem: str
    language: str
    #: What it is (and the file's stem): ok, ok_public_class, wrong_answer, timeout, runtime_error, compile_error.
    note: str
    expect: str
    source: str


def _s(problem: str, language: str, note: str, expect: str, source: str) -> Solution:
    return Solution(problem, language, note, expect, source.lstrip("\n"))


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
C_REVERSE = """
#include <stdio.h>
static char w[1000][101];
int main(void) {
    int n = 0;
    while (n < 1000 && scanf("%100s", w[n]) == 1) n++;
    for (int i = n - 1; i >= 0; i--) printf("%s%c", w[i], i ? ' ' : '\\n');
    return 0;
}
"""
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
CPP_REVERSE = """
#include <bits/stdc++.h>
using namespace std;
int main() {
    vector<string> w; string t;
    while (cin >> t) w.push_back(t);
    reverse(w.begin(), w.end());
    for (size_t i = 0; i < w.size(); i++) cout << w[i] << (i + 1 < w.size() ? " " : "\\n");
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
JAVA_REVERSE_PUBLIC = """
import java.util.*;

class Helper {
    static String join(List<String> w) { return String.join(" ", w); }
}

public class Solution {
    public static void main(String[] args) {
        Scanner sc = new Scanner(System.in);
        List<String> w = new ArrayList<>();
        while (sc.hasNext()) w.add(sc.next());
        Collections.reverse(w);
        System.out.println(Helper.join(w));
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
JS_REVERSE = """
const w = require('fs').readFileSync(0, 'utf8').split(/\\s+/).filter(Boolean);
console.log(w.reverse().join(' '));
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
RUST_REVERSE = """
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let mut w: Vec<&str> = s.split_whitespace().collect();
    w.reverse();
    println!("{}", w.join(" "));
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
GO_REVERSE = """
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Split(bufio.ScanWords)
	var w []string
	for sc.Scan() {
		w = append([]string{sc.Text()}, w...)
	}
	fmt.Println(strings.Join(w, " "))
}
"""
BASH_SUM = """
read -r n
read -r -a a
s=0
for x in "${a[@]}"; do s=$((s + x)); done
echo "$s"
"""
BASH_REVERSE = """
read -r -a w
out=()
for ((i = ${#w[@]} - 1; i >= 0; i--)); do out+=("${w[i]}"); done
echo "${out[*]}"
"""

SOLUTIONS: list[Solution] = [
    # C
    _s("sum", "c", "ok", "passed", C_SUM),
    _s("reverse", "c", "ok", "passed", C_REVERSE),
    _s("sum", "c", "wrong_answer", "failed", C_SUM_WRONG),
    _s("sum", "c", "timeout", "timeout", "int main(void) { volatile unsigned long i = 0; for (;;) i++; }\n"),
    _s("sum", "c", "runtime_error", "error", "#include <stdlib.h>\nint main(void) { abort(); }\n"),
    _s("sum", "c", "compile_error", "compile_error", "int main(void) { return 0 }\n"),
    # C++
    _s("sum", "cpp", "ok", "passed", CPP_SUM),
    _s("reverse", "cpp", "ok", "passed", CPP_REVERSE),
    _s("sum", "cpp", "wrong_answer", "failed", CPP_SUM.replace("long long s = 0, x;", "int s = 0, x;")),
    _s("sum", "cpp", "timeout", "timeout", "int main() { volatile unsigned long i = 0; for (;;) i++; }\n"),
    _s(
        "sum",
        "cpp",
        "runtime_error",
        "error",
        "#include <vector>\nint main() { std::vector<int> v; return v.at(3); }\n",
    ),
    _s("sum", "cpp", "compile_error", "compile_error", "int main() { undeclared(); }\n"),
    # Java
    _s("sum", "java", "ok", "passed", JAVA_SUM),
    _s("reverse", "java", "ok_public_class", "passed", JAVA_REVERSE_PUBLIC),
    _s(
        "sum",
        "java",
        "wrong_answer",
        "failed",
        JAVA_SUM.replace("long s = 0;", "int s = 0;").replace("s += Long.parseLong", "s += Integer.parseInt"),
    ),
    _s(
        "sum",
        "java",
        "timeout",
        "timeout",
        "public class Main { public static void main(String[] a) { long i = 0; while (true) { i++; } } }\n",
    ),
    _s(
        "sum",
        "java",
        "runtime_error",
        "error",
        "public class Main { public static void main(String[] a) { int[] x = new int[1]; x[2] = 1; } }\n",
    ),
    _s(
        "sum",
        "java",
        "compile_error",
        "compile_error",
        'public class Main { public static void main(String[] a) { int x = "s"; } }\n',
    ),
    # JavaScript (nodejs)
    _s("sum", "nodejs", "ok", "passed", JS_SUM),
    _s("reverse", "nodejs", "ok", "passed", JS_REVERSE),
    _s("sum", "nodejs", "wrong_answer", "failed", JS_SUM.replace("s.toString()", "(s + 1n).toString()")),
    _s("sum", "nodejs", "timeout", "timeout", "while (true) {}\n"),
    _s("sum", "nodejs", "runtime_error", "error", "null.x = 1;\n"),
    _s("sum", "nodejs", "compile_error", "error", "function (\n"),
    # Rust
    _s("sum", "rust", "ok", "passed", RUST_SUM),
    _s("reverse", "rust", "ok", "passed", RUST_REVERSE),
    _s("sum", "rust", "wrong_answer", "failed", RUST_SUM.replace("i64", "i32")),
    _s(
        "sum",
        "rust",
        "timeout",
        "timeout",
        "fn main() { let mut i: u64 = 0; loop { unsafe { std::ptr::write_volatile(&mut i, i.wrapping_add(1)) } } }\n",
    ),
    _s("sum", "rust", "runtime_error", "error", 'fn main() { panic!("no"); }\n'),
    _s("sum", "rust", "compile_error", "compile_error", 'fn main() { let x: i32 = "s"; }\n'),
    # Go (no Go on the host: the sandbox's verdicts only)
    _s("sum", "go", "ok", "passed", GO_SUM),
    _s("reverse", "go", "ok", "passed", GO_REVERSE),
    _s("sum", "go", "wrong_answer", "failed", GO_SUM.replace("var s, x int64", "var s, x int32")),
    _s("sum", "go", "timeout", "timeout", "package main\n\nfunc main() {\n\tfor {\n\t}\n}\n"),
    _s(
        "sum",
        "go",
        "runtime_error",
        "error",
        'package main\n\nfunc main() {\n\tvar m map[string]int\n\tm["a"] = 1\n}\n',
    ),
    _s("sum", "go", "compile_error", "compile_error", "package main\n\nfunc main() {\n\tx := 1\n}\n"),
    # Bash
    _s("sum", "bash", "ok", "passed", BASH_SUM),
    _s("reverse", "bash", "ok", "passed", BASH_REVERSE),
    _s("sum", "bash", "wrong_answer", "failed", BASH_SUM.replace("s=$((s + x))", "s=$x")),
    _s("sum", "bash", "timeout", "timeout", "while :; do :; done\n"),
    _s("sum", "bash", "runtime_error", "error", "exit 3\n"),
    _s("sum", "bash", "compile_error", "error", "if then fi (\n"),
]

#: Per case; the plain judge uses the same.
TIME_LIMIT_S = 2.0
MEMORY_BYTES = 256 * 1024**2
COMPILE_TIMEOUT_S = 20.0
