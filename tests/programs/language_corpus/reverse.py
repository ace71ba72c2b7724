"""`reverse`: the words of a line in reverse order (Java's solution is a public class not named Main)."""

from __future__ import annotations

from . import mutated

NAME = "reverse"
CASES = [
    ("a b c\n", "c b a\n"),
    ("hello\n", "hello\n"),
    ("one  two   three\n", "three two one\n"),
]

PY_REVERSE = """
print(" ".join(input().split()[::-1]))
"""
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
JS_REVERSE = """
const w = require('fs').readFileSync(0, 'utf8').split(/\\s+/).filter(Boolean);
console.log(w.reverse().join(' '));
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
BASH_REVERSE = """
read -r -a w
out=()
for ((i = ${#w[@]} - 1; i >= 0; i--)); do out+=("${w[i]}"); done
echo "${out[*]}"
"""

CORRECT = {
    "python": PY_REVERSE,
    "c": C_REVERSE,
    "cpp": CPP_REVERSE,
    "java": JAVA_REVERSE_PUBLIC,
    "nodejs": JS_REVERSE,
    "go": GO_REVERSE,
    "rust": RUST_REVERSE,
    "bash": BASH_REVERSE,
}
WRONG_ANSWER = {
    # sorted descending: right on "a b c", not on "one two three"
    "python": mutated(PY_REVERSE, "input().split()[::-1]", "sorted(input().split(), reverse=True)"),
    "c": mutated(C_REVERSE, "i >= 0; i--", "i > 0; i--"),
    "cpp": mutated(CPP_REVERSE, "reverse(w.begin(), w.end());", ""),
    "java": mutated(JAVA_REVERSE_PUBLIC, "Collections.reverse(w);", "Collections.sort(w);"),
    "nodejs": mutated(JS_REVERSE, "w.reverse().join(' ')", "w.join(' ')"),
    "go": mutated(GO_REVERSE, "w = append([]string{sc.Text()}, w...)", "w = append(w, sc.Text())"),
    "rust": mutated(RUST_REVERSE, "w.reverse();", "w.sort();"),
    "bash": mutated(BASH_REVERSE, "i >= 0", "i > 0"),
}
