"""`maze`: the fewest steps (up, down, left, right) from the top-left to the bottom-right cell
of a grid of "." (free) and "#" (wall), or -1 (a breadth-first search)."""

from __future__ import annotations

from . import mutated


def _snake(rows: int, cols: int) -> str:
    """A one-cell-wide path that winds through every other row (both ends free)."""
    lines = []
    for r in range(rows):
        if r % 2 == 0:
            lines.append("." * cols)
        elif r % 4 == 1:
            lines.append("#" * (cols - 1) + ".")
        else:
            lines.append("." + "#" * (cols - 1))
    return f"{rows} {cols}\n" + "\n".join(lines) + "\n"


NAME = "maze"
CASES = [
    ("1 1\n.\n", "0\n"),
    ("2 2\n.#\n#.\n", "-1\n"),
    ("3 4\n....\n.##.\n....\n", "5\n"),
    ("5 5\n.....\n####.\n.....\n.####\n.....\n", "16\n"),
    (_snake(21, 30), f"{11 * 29 + 20}\n"),  # 11 rows across, 20 down
]

PY = r"""
import sys
from collections import deque

data = sys.stdin.read().split()
r, c = int(data[0]), int(data[1])
grid = data[2 : 2 + r]
dist = [[-1] * c for _ in range(r)]
dist[0][0] = 0
queue = deque([(0, 0)])
while queue:
    y, x = queue.popleft()
    for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        ny, nx = y + dy, x + dx
        if 0 <= ny < r and 0 <= nx < c and grid[ny][nx] == "." and dist[ny][nx] < 0:
            dist[ny][nx] = dist[y][x] + 1
            queue.append((ny, nx))
print(dist[r - 1][c - 1])
"""
C = r"""
#include <stdio.h>
#include <string.h>
static char g[1000][1002];
static int dist[1000][1000], qy[1000000], qx[1000000];
int main(void) {
    int r, c;
    if (scanf("%d %d", &r, &c) != 2) return 0;
    for (int i = 0; i < r; i++) scanf("%1001s", g[i]);
    memset(dist, -1, sizeof dist);
    static const int dy[4] = {1, -1, 0, 0}, dx[4] = {0, 0, 1, -1};
    int head = 0, tail = 0;
    dist[0][0] = 0;
    qy[tail] = 0;
    qx[tail++] = 0;
    while (head < tail) {
        int y = qy[head], x = qx[head++];
        for (int k = 0; k < 4; k++) {
            int ny = y + dy[k], nx = x + dx[k];
            if (ny >= 0 && ny < r && nx >= 0 && nx < c && g[ny][nx] == '.' && dist[ny][nx] < 0) {
                dist[ny][nx] = dist[y][x] + 1;
                qy[tail] = ny;
                qx[tail++] = nx;
            }
        }
    }
    printf("%d\n", dist[r - 1][c - 1]);
    return 0;
}
"""
CPP = r"""
#include <bits/stdc++.h>
using namespace std;
int main() {
    int r, c;
    cin >> r >> c;
    vector<string> g(r);
    for (auto &row : g) cin >> row;
    vector<vector<int>> dist(r, vector<int>(c, -1));
    queue<pair<int, int>> q;
    dist[0][0] = 0;
    q.push({0, 0});
    const int dy[] = {1, -1, 0, 0}, dx[] = {0, 0, 1, -1};
    while (!q.empty()) {
        auto [y, x] = q.front();
        q.pop();
        for (int k = 0; k < 4; k++) {
            int ny = y + dy[k], nx = x + dx[k];
            if (ny < 0 || ny >= r || nx < 0 || nx >= c || g[ny][nx] != '.' || dist[ny][nx] >= 0) continue;
            dist[ny][nx] = dist[y][x] + 1;
            q.push({ny, nx});
        }
    }
    cout << dist[r - 1][c - 1] << '\n';
}
"""
JAVA = r"""
import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(in.readLine());
        int r = Integer.parseInt(st.nextToken()), c = Integer.parseInt(st.nextToken());
        char[][] g = new char[r][];
        for (int i = 0; i < r; i++) g[i] = in.readLine().trim().toCharArray();
        int[][] dist = new int[r][c];
        for (int[] row : dist) Arrays.fill(row, -1);
        int[] dy = {1, -1, 0, 0}, dx = {0, 0, 1, -1};
        ArrayDeque<int[]> q = new ArrayDeque<>();
        dist[0][0] = 0;
        q.add(new int[] {0, 0});
        while (!q.isEmpty()) {
            int[] p = q.poll();
            for (int k = 0; k < 4; k++) {
                int ny = p[0] + dy[k], nx = p[1] + dx[k];
                if (ny >= 0 && ny < r && nx >= 0 && nx < c && g[ny][nx] == '.' && dist[ny][nx] < 0) {
                    dist[ny][nx] = dist[p[0]][p[1]] + 1;
                    q.add(new int[] {ny, nx});
                }
            }
        }
        System.out.println(dist[r - 1][c - 1]);
    }
}
"""
JS = r"""
const t = require('fs').readFileSync(0, 'utf8').split(/\s+/).filter(Boolean);
const r = Number(t[0]), c = Number(t[1]);
const g = t.slice(2, 2 + r);
const dist = Array.from({ length: r }, () => new Array(c).fill(-1));
const moves = [[1, 0], [-1, 0], [0, 1], [0, -1]];
const q = [[0, 0]];
dist[0][0] = 0;
for (let head = 0; head < q.length; head++) {
  const [y, x] = q[head];
  for (const [dy, dx] of moves) {
    const ny = y + dy, nx = x + dx;
    if (ny >= 0 && ny < r && nx >= 0 && nx < c && g[ny][nx] === '.' && dist[ny][nx] < 0) {
      dist[ny][nx] = dist[y][x] + 1;
      q.push([ny, nx]);
    }
  }
}
console.log(dist[r - 1][c - 1]);
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
	var r, c int
	fmt.Fscan(in, &r, &c)
	g := make([]string, r)
	for i := range g {
		fmt.Fscan(in, &g[i])
	}
	dist := make([][]int, r)
	for i := range dist {
		dist[i] = make([]int, c)
		for j := range dist[i] {
			dist[i][j] = -1
		}
	}
	dy := []int{1, -1, 0, 0}
	dx := []int{0, 0, 1, -1}
	q := [][2]int{{0, 0}}
	dist[0][0] = 0
	for head := 0; head < len(q); head++ {
		y, x := q[head][0], q[head][1]
		for k := 0; k < 4; k++ {
			ny, nx := y+dy[k], x+dx[k]
			if ny >= 0 && ny < r && nx >= 0 && nx < c && g[ny][nx] == '.' && dist[ny][nx] < 0 {
				dist[ny][nx] = dist[y][x] + 1
				q = append(q, [2]int{ny, nx})
			}
		}
	}
	fmt.Println(dist[r-1][c-1])
}
"""
RUST = r"""
use std::collections::VecDeque;
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let mut it = s.split_whitespace();
    let r: usize = it.next().unwrap().parse().unwrap();
    let c: usize = it.next().unwrap().parse().unwrap();
    let g: Vec<&[u8]> = (0..r).map(|_| it.next().unwrap().as_bytes()).collect();
    let mut dist = vec![vec![-1i64; c]; r];
    let moves: [(i64, i64); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
    let mut q = VecDeque::new();
    dist[0][0] = 0;
    q.push_back((0usize, 0usize));
    while let Some((y, x)) = q.pop_front() {
        for &(dy, dx) in moves.iter() {
            let (ny, nx) = (y as i64 + dy, x as i64 + dx);
            if ny < 0 || nx < 0 || ny >= r as i64 || nx >= c as i64 {
                continue;
            }
            let (ny, nx) = (ny as usize, nx as usize);
            if g[ny][nx] == b'.' && dist[ny][nx] < 0 {
                dist[ny][nx] = dist[y][x] + 1;
                q.push_back((ny, nx));
            }
        }
    }
    println!("{}", dist[r - 1][c - 1]);
}
"""
BASH = r"""
read -r r c
grid=()
for ((i = 0; i < r; i++)); do
  read -r row
  grid+=("$row")
done
declare -A dist
dist[0,0]=0
qy=(0) qx=(0) head=0
dys=(1 -1 0 0) dxs=(0 0 1 -1)
while ((head < ${#qy[@]})); do
  y=${qy[head]} x=${qx[head]}
  head=$((head + 1))
  d=${dist[$y,$x]}
  for k in 0 1 2 3; do
    ny=$((y + dys[k])) nx=$((x + dxs[k]))
    if ((ny >= 0 && ny < r && nx >= 0 && nx < c)) && [[ ${grid[ny]:nx:1} == "." && -z ${dist[$ny,$nx]} ]]; then
      dist[$ny,$nx]=$((d + 1))
      qy+=("$ny") qx+=("$nx")
    fi
  done
done
echo "${dist[$((r - 1)),$((c - 1))]:--1}"
"""
CORRECT = {"python": PY, "c": C, "cpp": CPP, "java": JAVA, "nodejs": JS, "go": GO, "rust": RUST, "bash": BASH}
WRONG_ANSWER = {
    # a diagonal move as well
    "python": mutated(PY, "((1, 0), (-1, 0), (0, 1), (0, -1))", "((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1))"),
    "c": mutated(C, "k < 4", "k < 3"),  # never moves left
    "cpp": mutated(CPP, "cout << dist[r - 1][c - 1]", "cout << dist[r - 1][c - 1] + 1"),  # counts cells
    "java": mutated(JAVA, "k < 4", "k < 3"),
    "nodejs": mutated(JS, "[0, -1]];", "[0, -1], [1, 1]];"),
    "go": mutated(GO, "fmt.Println(dist[r-1][c-1])", "fmt.Println(dist[r-1][c-1] + 1)"),
    "rust": mutated(
        RUST, "[(i64, i64); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)]", "[(i64, i64); 3] = [(1, 0), (-1, 0), (0, 1)]"
    ),
    "bash": mutated(BASH, "for k in 0 1 2 3; do", "for k in 0 1 2; do"),
}
