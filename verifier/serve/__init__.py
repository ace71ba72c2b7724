"""`verifier serve`: the verifier as an HTTP service for reward loops and shared harnesses
(the `serve` extra: FastAPI, uvicorn, prometheus_client; docs/serve.md).

A new wing on the existing seams: every check is `Verifier.check` (one of the configured run
policy's verifiers), every job queues for the machine-wide admission slots the command line
uses (`verifier.sandbox.admission`), and every answer is the `Evidence` model, or for
`/run_code` SandboxFusion's shape made from it. The modules, each with one job:

- `api`: the wire format (pydantic request and response models, shared with `verifier.client`)
- `config`: the server's configuration file and the suites it registers by name
- `tokens`: bearer tokens (stored as SHA-256 hashes), what each may do, reloading the file
- `quota`: each token's concurrency, rate and daily quota
- `store`: each token's own evidence, for `GET /v1/evidence/{id}`, and the batch lines waiting
  for their clients, both bounded in bytes per token and in all
- `metrics`: the Prometheus metrics of one server
- `engine`: the verifiers, the worker threads and the overload rule
- `sandboxfusion`: `/run_code` requests as program suites, and evidence as SandboxFusion's answer
- `body`: bounded, deadline-bound request bodies
- `state`: what one server holds; `checks`: one check's way through it (who, may it, the run,
  the record; a batch's stream); `routes`: the endpoints; `middleware`: the access log (anything
  that could be a token redacted, control characters escaped) and the short way of one-check
  requests; `app`: the FastAPI app and its lifespan
- `server`: uvicorn (a deadline for every phase of a connection, the header bound, a budget of
  connections not yet authenticated per peer address), signals, graceful shutdown

Importing this package imports none of the extra's libraries (the modules that need them do).
"""
