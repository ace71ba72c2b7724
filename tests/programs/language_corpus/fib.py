"""`fib`: the n-th Fibonacci number for n up to 90 (needs 64 bits; above 2^53, so a double is
not enough either: JavaScript needs BigInt)."""

from __future__ import annotations

from . import mutated

NAME = "fib"
CASES = [
    ("0\n", "0\n"),
    ("1\n", "1\n"),
    ("10\n", "55\n"),
    ("50\n", "12586269025\n"),
    ("90\n", "2880067194370816120\n"),
]

PY = r"""
n = int(input())
a, b = 0, 1
for _ in range(n):
    a, b = b, a + b
print(a)
"""
C = r"""
#include <stdio.h>
int main(void) {
    int n;
    if (scanf("%d", &n) != 1) return 0;
    unsigned long long a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        unsigned long long t = a + b;
        a = b;
        b = t;
    }
    printf("%llu\n", a);
    return 0;
}
"""
CPP = r"""
#include <iostream>
int main() {
    int n;
    std::cin >> n;
    long long a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        long long t = a + b;
        a = b;
        b = t;
    }
    std::cout << a << std::endl;
}
"""
JAVA = r"""
import java.util.Scanner;

public class Main {
    public static void main(String[] args) {
        int n = new Scanner(System.in).nextInt();
        long a = 0, b = 1;
        for (int i = 0; i < n; i++) {
            long t = a + b;
            a = b;
            b = t;
        }
        System.out.println(a);
    }
}
"""
JS = r"""
const n = Number(require('fs').readFileSync(0, 'utf8').trim());
let a = 0n, b = 1n;
for (let i = 0; i < n; i++) [a, b] = [b, a + b];
console.log(a.toString());
"""
GO = r"""
package main

import "fmt"

func main() {
	var n int
	fmt.Scan(&n)
	var a, b uint64 = 0, 1
	for i := 0; i < n; i++ {
		a, b = b, a+b
	}
	fmt.Println(a)
}
"""
RUST = r"""
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let n: u32 = s.trim().parse().unwrap();
    let (mut a, mut b): (u64, u64) = (0, 1);
    for _ in 0..n {
        let t = a + b;
        a = b;
        b = t;
    }
    println!("{}", a);
}
"""
BASH = r"""
read -r n
a=0 b=1
for ((i = 0; i < n; i++)); do
  t=$((a + b)); a=$b; b=$t
done
echo "$a"
"""
CORRECT = {"python": PY, "c": C, "cpp": CPP, "java": JAVA, "nodejs": JS, "go": GO, "rust": RUST, "bash": BASH}
WRONG_ANSWER = {
    "python": mutated(PY, "range(n)", "range(n - 1)"),  # off by one
    "c": mutated(C, "unsigned long long", "unsigned").replace("%llu", "%u"),  # 32 bits, wraps
    "cpp": mutated(CPP, "long long", "unsigned"),
    "java": mutated(JAVA, "long a = 0, b = 1;", "int a = 0, b = 1;").replace("long t", "int t"),
    "nodejs": mutated(JS, "let a = 0n, b = 1n;", "let a = 0, b = 1;"),  # a double: inexact above 2^53
    "go": mutated(GO, "var a, b uint64", "var a, b uint32"),
    "rust": mutated(RUST, "(u64, u64)", "(u32, u32)"),  # wraps in a release build
    "bash": mutated(BASH, "i < n", "i <= n"),
}
