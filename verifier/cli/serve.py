"""`verifier serve`: the verifier as an HTTP service (the serve extra; docs/serve.md)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from verifier._distribution import install_hint
from verifier.cli.common import ensure_image, fail, ray_option, require_runtime, sandbox_failure


# Long only in its signature (every option with its help, as typer reads them); the work is
# verifier.serve.server.serve.
def serve(
    config: Annotated[
        Path,
        typer.Option(
            "--config",
            "-c",
            help="The server's configuration (TOML): tokens file, suites, pool, limits, HTTP bounds (docs/serve.md).",
        ),
    ],
    host: Annotated[
        str | None, typer.Option(help="Bind address (default: the configuration's, else 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: the configuration's; 0 picks a free one).")] = None,
    ray: Annotated[
        str | None,
        ray_option(
            "Verify on a Ray cluster (needs {hint}): its address, or auto. A warm pool on every node (docs/scale.md)."
        ),
    ] = None,
) -> None:
    """Serve checks over HTTP: POST /v1/check and /v1/batch (evidence), /run_code (SandboxFusion's
    shape), GET /v1/evidence/ID, /healthz, /metrics; bearer tokens from the configuration's token
    file. Runs until SIGTERM or Ctrl-C, then removes every container it made.

    Binds 127.0.0.1 unless told otherwise: put TLS and any public exposure behind a reverse proxy."""
    try:
        from verifier.serve import server
        from verifier.serve.config import ConfigError, load_config
        from verifier.serve.tokens import TokenError
    except ImportError:
        raise fail(f"verifier serve needs the serve extra: {install_hint('serve')}") from None
    from verifier.errors import SandboxUnavailable

    if port is not None and not 0 <= port <= 65535:
        raise fail(f"--port must be within 0 and 65535, not {port}", option="--port")
    if not config.is_file():
        raise fail(f"--config: the configuration file {config} does not exist", option="--config")
    try:
        settings = load_config(config)
    except ConfigError as exc:
        raise fail(f"--config: {exc}", option="--config") from None
    updates = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
    settings = settings.model_copy(update=updates)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    image = None
    if ray is None:
        try:
            require_runtime(settings.limits)
            ensure_image()
            from verifier.sandbox.image import image_tag

            image = image_tag()
        except SandboxUnavailable as exc:
            raise sandbox_failure(exc) from None
    try:
        server.serve(settings, ray=ray, image=image)
    except (ConfigError, TokenError) as exc:
        raise fail(f"--config: {exc}", option="--config") from None
    except OSError as exc:
        raise fail(
            f"cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc}", option="--port"
        ) from None
