"""`wordfreq`: the words of a text read until end of input, counted without regard to case;
print "word count" lines, most frequent first, ties in alphabetical order (string processing,
sorting with ties; the last case has no final newline)."""

from __future__ import annotations

from . import mutated

NAME = "wordfreq"
CASES = [
    ("the cat and The dog\nand THE bird\n", "the 3\nand 2\nbird 1\ncat 1\ndog 1\n"),
    ("b a c\n", "a 1\nb 1\nc 1\n"),
    ("Zeta zeta alpha ALPHA beta\n\n  gamma\n", "alpha 2\nzeta 2\nbeta 1\ngamma 1\n"),
    ("word", "word 1\n"),
]

PY = r"""
import sys
from collections import Counter

counts = Counter(w.lower() for w in sys.stdin.read().split())
for word, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
    print(word, count)
"""
C = r"""
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char w[101];
    int c;
} Entry;
static char words[20000][101];
static Entry entries[20000];

static int by_word(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }
static int by_count(const void *a, const void *b) {
    const Entry *x = a, *y = b;
    if (x->c != y->c) return y->c - x->c;
    return strcmp(x->w, y->w);
}

int main(void) {
    int n = 0, m = 0;
    while (n < 20000 && scanf("%100s", words[n]) == 1) {
        for (char *p = words[n]; *p; p++) *p = (char)tolower((unsigned char)*p);
        n++;
    }
    qsort(words, n, sizeof words[0], by_word);
    for (int i = 0; i < n; i++) {
        if (m > 0 && strcmp(entries[m - 1].w, words[i]) == 0) {
            entries[m - 1].c++;
        } else {
            strcpy(entries[m].w, words[i]);
            entries[m++].c = 1;
        }
    }
    qsort(entries, m, sizeof entries[0], by_count);
    for (int i = 0; i < m; i++) printf("%s %d\n", entries[i].w, entries[i].c);
    return 0;
}
"""
CPP = r"""
#include <bits/stdc++.h>
using namespace std;
int main() {
    map<string, int> counts;
    string w;
    while (cin >> w) {
        for (auto &ch : w) ch = (char)tolower((unsigned char)ch);
        counts[w]++;
    }
    vector<pair<int, string>> order;
    for (auto &[word, c] : counts) order.push_back({-c, word});
    sort(order.begin(), order.end());
    for (auto &[c, word] : order) cout << word << ' ' << -c << '\n';
}
"""
JAVA = r"""
import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        Map<String, Integer> counts = new HashMap<>();
        String line;
        while ((line = in.readLine()) != null) {
            for (String w : line.trim().split("\\s+")) {
                if (!w.isEmpty()) counts.merge(w.toLowerCase(Locale.ROOT), 1, Integer::sum);
            }
        }
        List<Map.Entry<String, Integer>> order = new ArrayList<>(counts.entrySet());
        order.sort((a, b) -> !a.getValue().equals(b.getValue())
            ? b.getValue() - a.getValue()
            : a.getKey().compareTo(b.getKey()));
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, Integer> e : order) out.append(e.getKey()).append(' ').append(e.getValue()).append('\n');
        System.out.print(out);
    }
}
"""
JS = r"""
const words = require('fs').readFileSync(0, 'utf8').split(/\s+/).filter(Boolean).map((w) => w.toLowerCase());
const counts = new Map();
for (const w of words) counts.set(w, (counts.get(w) || 0) + 1);
const order = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
console.log(order.map(([w, c]) => `${w} ${c}`).join('\n'));
"""
GO = r"""
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Split(bufio.ScanWords)
	counts := map[string]int{}
	for sc.Scan() {
		counts[strings.ToLower(sc.Text())]++
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if counts[words[i]] != counts[words[j]] {
			return counts[words[i]] > counts[words[j]]
		}
		return words[i] < words[j]
	})
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, w := range words {
		fmt.Fprintln(out, w, counts[w])
	}
}
"""
RUST = r"""
use std::collections::HashMap;
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for w in s.split_whitespace() {
        *counts.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    let mut order: Vec<(String, usize)> = counts.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (w, c) in order {
        println!("{} {}", w, c);
    }
}
"""
BASH = r"""
export LC_ALL=C
tr 'A-Z' 'a-z' | tr -s ' \t\n' '\n' | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | while read -r c w; do
  echo "$w $c"
done
"""
CORRECT = {"python": PY, "c": C, "cpp": CPP, "java": JAVA, "nodejs": JS, "go": GO, "rust": RUST, "bash": BASH}
WRONG_ANSWER = {
    # ties in the order first seen
    "python": mutated(PY, "key=lambda item: (-item[1], item[0])", "key=lambda item: -item[1]"),
    "c": mutated(C, "*p = (char)tolower((unsigned char)*p);", "(void)*p;"),  # case counts
    "cpp": mutated(CPP, "sort(order.begin(), order.end());", "sort(order.rbegin(), order.rend());"),
    "java": mutated(JAVA, "a.getKey().compareTo(b.getKey())", "b.getKey().compareTo(a.getKey())"),
    "nodejs": mutated(JS, " || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)", ""),
    "go": mutated(GO, "return words[i] < words[j]", "return words[i] > words[j]"),
    "rust": mutated(RUST, "w.to_lowercase()", "w.to_string()"),
    "bash": mutated(BASH, "tr 'A-Z' 'a-z' | ", ""),
}
