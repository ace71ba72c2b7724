# expect: passed
# technique: a Bash program answers right but leaves a disowned background loop (nohup, its own session) that keeps a marker alive for the next case to find
setsid nohup sh -c 'while :; do : > /tmp/daemon-marker; : > /dev/shm/daemon-marker; sleep 0.01; done' >/dev/null 2>&1 < /dev/null &
disown
awk 'NR == 1 { n = $1 } NR == 2 { for (i = 1; i <= n; i++) s += $i; printf "%.0f\n", s }'
