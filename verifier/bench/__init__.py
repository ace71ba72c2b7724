"""Benchmark harnesses (extra: `pip install verifier[bench]`). The core never imports this."""
