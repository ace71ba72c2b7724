"""The in-container runner. Installed into the sandbox image as `verifier_runner`.

Standard library only (plus pytest and Hypothesis on the trusted side); never imports
`verifier`. Process layout inside one container::

    launch (root, SETUID/SETGID only) --fork--> zygote (uid 2001) --fork--> candidate process(es)
          \\--setuid 2000, exec--> trusted (pytest + Hypothesis + result reporting)

The candidate never shares a process with the tests or the reporting; calls cross as
plain data (see wire.py).
"""
