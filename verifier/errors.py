"""Exceptions raised by verifier.

The tree (a class defined elsewhere names its module in brackets; "also" names a builtin base
that callers may catch it by)::

    VerifierError                 catch this for everything verifier raises
      + InvalidInput              the caller's input is unusable (bad candidate, bad suite)
        - DependencyError         requirement lines refused or not resolvable [sandbox/requirements.py]
          - EnvironmentProblem    both sides of a review fail to collect for a reason not the change's [review/deps.py]
        - BadRecord               a review instance record that does not fit [review/instances.py]
      + SandboxUnavailable        the sandbox could not run at all (no engine, no image)
        - ImageNotFound           the sandbox image for this recipe is not built
        - EngineError             the engine refused or failed a request [sandbox/container.py]
        - NameTaken               a container of that name was there first [sandbox/container.py]
        - RuntimeNotRegistered    the engine lacks the runtime (gVisor's runsc) [sandbox/runtime.py]
        - NodeRefused             a Ray node cannot serve this job's image or limits [cluster/node.py]
        - ProvenanceError         the records of the sandboxes we made cannot be kept safely [sandbox/provenance.py]
      + HostOverloaded            this machine was too busy to run the job fairly
      + UnknownSandbox            no live lasting agent sandbox of ours has that id; also a LookupError
      + NoCandidate               the agent's state holds no candidate to check [agents/candidates.py]
      + SeedError                 a seed folder cannot be copied; also a ValueError [agents/sandbox/seed.py]
      + NoDatabase                no run database there; also a FileNotFoundError [agents/recorder.py]
      + SampleNotVerified         bench samples got no verdict: no pass@k [bench/reference.py]
      + ServeError                the server refused a request, after any retries [client.py]
      + Refusal                   the server refuses a request before any check [serve/body.py]
      + TokenError                the token file cannot be used; also a ValueError [serve/tokens.py]
      + ConfigError               the server's configuration is unusable; also a ValueError [serve/config.py]
      + ConfigError               pytest would refuse a configuration; also a ValueError [review/pytest_config.py]

The runner's own errors (`verifier/runner/`, standard library only, imported in the image as
`verifier_runner`) are not in the tree: the runner cannot import this module.

A *verdict* is never an exception: a candidate that fails, hangs or crashes yields an
`Evidence` with ``ok: false``. These exceptions mean "no verdict could be produced",
and `Verifier.check` turns them into fail-closed evidence at one place.
"""

from __future__ import annotations


class VerifierError(Exception):
    """Base class of every exception verifier raises."""


class InvalidInput(VerifierError):
    """The candidate or suite given by the caller cannot be verified as it is.

    `sha256` names the bytes that were refused (the candidate's, or the suite tree's digest)
    when there were any to read, so a refusal is bound to content like any other evidence.
    The message is trusted text (templates, numbers, the caller's own paths); what the candidate
    chose (the name of a file inside a candidate folder) is in `detail_untrusted`, which evidence
    carries only in an untrusted field.
    """

    def __init__(self, message: str, *, sha256: str = "", detail_untrusted: str = "") -> None:
        super().__init__(message)
        self.sha256 = sha256
        self.detail_untrusted = detail_untrusted


class SandboxUnavailable(VerifierError):
    """The sandbox could not run (engine not answering, container failed to start, ...)."""


class ImageNotFound(SandboxUnavailable):
    """The sandbox image for the current recipe is not built."""


class HostOverloaded(VerifierError):
    """The machine was too busy to run the job fairly: no sandbox slot came free in time."""


class UnknownSandbox(VerifierError, LookupError):
    """`DockerSandbox.attach` was given an id that names no live lasting agent sandbox of ours.

    `why` says which: "missing" (no container of that name), "foreign" (a container that is
    not one of our agent sandboxes), "fleeting" (ours, but made to end with its process: only
    its maker may use it), "starting" (its maker is starting it right now) or "ended" (it
    stopped after its idle timeout; `verifier gc` removes it).
    """

    def __init__(self, message: str, *, why: str) -> None:
        super().__init__(message)
        self.why = why
