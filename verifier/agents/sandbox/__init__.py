"""The working agent's own sandbox (`DockerSandbox`, a Deep Agents `BaseSandbox`), by job: `box`
(the sandbox: made, used, attached, closed), `commands` (one process through the engine's exec
API), `files` (files in and out), `identity` (proof that a container is one we made, with its
hardening), `lease` (a lasting sandbox's idle clock), `limits` (what a session may use), `seed`
(a host folder copied in), `candidate` (the latest candidate read from it at grading time) and
`threads` (one lasting sandbox per LangGraph thread). Import the classes from `verifier.agents`."""
