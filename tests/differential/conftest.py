"""The corpus's suites are run by the harness (plain pytest in a subprocess, and the sandbox),
never collected by the project's own pytest run."""

collect_ignore_glob = ["cases/*"]
