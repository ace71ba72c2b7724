"""The working agent's own sandbox (`DockerSandbox`, a Deep Agents `BaseSandbox`), by job: `box`
(the sandbox: made, used, attached, closed), `commands` (one process through the engine's exec
API), `files` (the programs that move files in and out), `making` (its container made and
launched), `transfers` (its file operations), `identity` (proof that a container is one we made,
with its hardening), `lease` (a lasting sandbox's idle clock), `limits` (what a session may use),
`seed` (a host folder copied in), `candidate` (the latest candidate read from it at grading time)
and `threads` (one lasting sandbox per LangGraph thread). Import the classes from `verifier.agents`."""
