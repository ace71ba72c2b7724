"""`average`: the mean of the non-negative integers read until end of input (any number per
line; the last case has no final newline), compared as floats (`compare = "float"`)."""

from __future__ import annotations

from . import mutated

NAME = "average"
COMPARE = "float"
CASES = [
    ("1 2\n", "1.5\n"),
    ("3\n", "3\n"),
    ("1 2 2\n", "1.6666666667\n"),
    ("10\n20\n30\n40\n", "25.0\n"),
    ("1 1 1 2\n7 8\n", "3.3333333333\n"),
    ("4 5", "4.5\n"),
]

PY = r"""
import sys

nums = [int(x) for x in sys.stdin.read().split()]
print(sum(nums) / len(nums))
"""
C = r"""
#include <stdio.h>
int main(void) {
    long long s = 0, x;
    int n = 0;
    while (scanf("%lld", &x) == 1) {
        s += x;
        n++;
    }
    printf("%.10f\n", (double)s / n);
    return 0;
}
"""
CPP = r"""
#include <iomanip>
#include <iostream>
int main() {
    long long s = 0, x, n = 0;
    while (std::cin >> x) {
        s += x;
        n++;
    }
    std::cout << std::fixed << std::setprecision(10) << (double)s / n << '\n';
}
"""
JAVA = r"""
import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        long s = 0, n = 0;
        String line;
        while ((line = in.readLine()) != null) {
            StringTokenizer st = new StringTokenizer(line);
            while (st.hasMoreTokens()) {
                s += Long.parseLong(st.nextToken());
                n++;
            }
        }
        System.out.println((double) s / n);
    }
}
"""
JS = r"""
const nums = require('fs').readFileSync(0, 'utf8').split(/\s+/).filter(Boolean).map(Number);
const mean = nums.reduce((a, b) => a + b, 0) / nums.length;
console.log(mean.toFixed(9));
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
	var s, n, x int64
	for {
		if _, err := fmt.Fscan(in, &x); err != nil {
			break
		}
		s += x
		n++
	}
	fmt.Printf("%.10f\n", float64(s)/float64(n))
}
"""
RUST = r"""
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let nums: Vec<i64> = s.split_whitespace().map(|t| t.parse().unwrap()).collect();
    let total: i64 = nums.iter().sum();
    println!("{:.10}", total as f64 / nums.len() as f64);
}
"""
BASH = r"""
s=0 n=0
while read -r -a row || ((${#row[@]})); do
  for x in "${row[@]}"; do
    s=$((s + x)) n=$((n + 1))
  done
done
scaled=$((s * 10000000 / n))
printf '%d.%07d\n' $((scaled / 10000000)) $((scaled % 10000000))
"""
CORRECT = {"python": PY, "c": C, "cpp": CPP, "java": JAVA, "nodejs": JS, "go": GO, "rust": RUST, "bash": BASH}
WRONG_ANSWER = {  # the integer quotient, or a number rounded too far
    "python": mutated(PY, "sum(nums) / len(nums)", "sum(nums) // len(nums)"),
    "c": mutated(C, "(double)s / n", "(double)(s / n)"),
    "cpp": mutated(CPP, "(double)s / n", "s / n"),
    "java": mutated(JAVA, "(double) s / n", "s / n"),
    "nodejs": mutated(JS, "mean.toFixed(9)", "mean.toFixed(0)"),
    "go": mutated(GO, "float64(s)/float64(n)", "float64(s/n)"),
    "rust": mutated(RUST, "{:.10}", "{:.1}"),
    "bash": mutated(BASH, "scaled=$((s * 10000000 / n))", "scaled=$((s / n * 10000000))"),
}
