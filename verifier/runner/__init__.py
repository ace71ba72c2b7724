"""The in-container runner. Installed into the sandbox image as `verifier_runner`.

Standard library only (plus pytest and Hypothesis on the trusted side); never imports
`verifier` (the host imports the modules both sides share from here instead: `protocol/`,
`review_protocol.py`, `suite_files.py`, `trees.py`). Process
layout inside one container::

    launch (root; SETUID/SETGID/KILL only)
      |--fork, uid 2002--> zygote (keeps SETUID/SETGID/KILL) --fork, uid 2001--> candidate process
      |                                                     \\--fork, uid 2001--> sweeper (reset)
      \\--fork, uid 2000--> trusted server --fork--> trusted child (pytest or the direct runner)

The candidate never shares a process with the tests or the reporting; calls cross as plain
data or handles (wire.py, handles.py; exceptions and warnings rebuilt by rebuilt.py; every
fault an abort of faults.py); the protocol with the host is protocol.py (review_protocol.py
for reviews).
"""
