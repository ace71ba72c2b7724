"""The in-container runner. Installed into the sandbox image as `verifier_runner`.

Standard library only (plus pytest and Hypothesis on the trusted side); never imports
`verifier` (the host imports `protocol.py` and `suite_files.py` from here instead). Process
layout inside one container::

    launch (root; SETUID/SETGID/KILL only)
      |--fork, uid 2002--> zygote (keeps SETUID/SETGID/KILL) --fork, uid 2001--> candidate process
      |                                                     \\--fork, uid 2001--> sweeper (reset)
      \\--fork, uid 2000--> trusted server --fork--> trusted child (pytest or the direct runner)

The candidate never shares a process with the tests or the reporting; calls cross as plain
data or handles (wire.py, handles.py); the protocol with the host is protocol.py.
"""
