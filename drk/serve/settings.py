"""``drk serve``'s settings: one validated dataclass, built by the command line or by a test."""

from __future__ import annotations

from dataclasses import dataclass, field

from drk.gym.config import EvalConfig


@dataclass(frozen=True)
class ServeSettings:
    """How the service runs and what it accepts.

    The limits exist because the service takes untrusted text from the network: a body, a piece of code and the
    number of unfinished tasks are bounded so one client cannot exhaust the host's memory or disk.
    """

    #: The bearer token every request but ``/health`` must carry.
    token: str
    #: ``auto``, ``cuda`` or ``cpu`` (Triton interpreter), as for :class:`drk.gym.Pool`.
    device: str = "auto"
    #: SQLite file of tasks and results (created if missing; a restart on the same file resumes).
    db: str = ".drk_serve.sqlite"
    #: Concurrent evaluations (default: ``Pool``'s: 4 per GPU, or the number of CPU cores).
    workers: int | None = None
    #: Unfinished (queued + running) tasks at most; a request that would exceed it gets 429.
    max_queue: int = 1024
    #: Bytes of one request body at most (413 beyond).
    max_body_bytes: int = 32 * 2**20
    #: Characters of one task's ``reference_code`` or ``kernel_code`` at most (413 beyond).
    max_code_chars: int = 1_000_000
    #: Seconds ``POST /evaluate`` waits for the verdict before answering 202 (the client then polls).
    wait_s: float = 600.0
    #: Result cache of the ``Pool`` (``None``: none; task ids already make re-submissions free).
    cache_dir: str | None = None
    #: The evaluation settings requests start from (a request may change all but the server-only keys).
    config: EvalConfig = field(default_factory=EvalConfig)
    #: When set, the only references accepted (:func:`reference_key` of each problem's source): a reference runs
    #: as trusted code outside the sandbox, so a server whose token may leak should judge known problems only.
    allowed_references: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if not self.token or len(self.token) < 8:
            raise ValueError("the token must be at least 8 characters (use e.g. `openssl rand -hex 32`)")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        if self.max_queue < 1 or self.max_body_bytes < 1024 or self.max_code_chars < 1:
            raise ValueError("max_queue and max_code_chars must be >= 1, max_body_bytes >= 1024")
        if self.wait_s < 0:
            raise ValueError(f"wait_s must be >= 0, got {self.wait_s}")


def reference_key(source: str) -> str:
    """A reference's identity for the allow-list: the SHA-256 of its source with line endings and trailing space of
    each line normalised (a client may send the same file with other line endings)."""
    import hashlib

    text = "\n".join(line.rstrip() for line in source.replace("\r\n", "\n").split("\n")).strip()
    return hashlib.sha256(text.encode()).hexdigest()
