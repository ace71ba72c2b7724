"""Benchmark harnesses, as a library: `humaneval` (HumanEval-format samples, each problem's own
check(); needs the bench extra, `pip install 'sandboxed-verifier[bench]'`) and `io` (programs on
stdin/stdout; no extra). What both share is `harness` (jobs, the run policy's verifier, the
summary) and `passk`. The `verifier bench` commands are thin shells over these; the top-level
`bench/` folder holds the measurement scripts (speed and memory against the baselines, with
their result files), which use this library. The core never imports this package."""
