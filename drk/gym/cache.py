"""A content-addressed, on-disk cache of evaluation results.

RL samples repeat a lot (the same reply for the same problem); an evaluation is seconds of GPU time, a cache hit
is a file read. The key covers everything that decides the verdict: problem source, the extracted candidate
code, the evaluation config, the device kind (GPU model) and the drk version. Each entry is one JSON file,
written to a temporary name and renamed into place, so concurrent writers (threads, processes, machines on a
shared filesystem) never expose a half-written entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from drk import __version__
from drk.gym.config import EvalConfig
from drk.gym.extract import extract_code
from drk.gym.problem import Problem
from drk.gym.result import EvalResult

#: Statuses that say something about the machine's state rather than the candidate: never cached.
UNCACHED_STATUSES = frozenset({"timeout"})
#: Hack reasons that can come from the host's load rather than the program (the wall-clock bound): a verdict carrying
#: one is not kept, so a candidate that loaded the host while an honest program was timed (an attacker review,
#: 2026-12-01: 48 busy children in sessions of their own flagged 3 of 4 honest siblings in a CPU Pool) cannot
#: make that verdict permanent.
UNCACHED_REASONS = frozenset({"timing_mismatch"})


def cache_key(problem: Problem, candidate_src: str, config: EvalConfig, device_kind: str) -> str:
    """SHA-256 over what decides the verdict (prose around the code does not change the key).

    The code is keyed exactly as extracted, the text :func:`drk.gym.evaluate` runs: two programs that run differently
    must never share a result. Stripping leading whitespace once served a broken reply `correct`; stripping trailing
    whitespace did too (``str.rstrip`` also strips U+00A0 and other characters Python refuses, and a trailing
    backslash's newlines: attacker review, 2026-12-02).
    """
    code = extract_code(candidate_src) if isinstance(candidate_src, str) else None
    payload = json.dumps(
        {"problem": problem.source, "code": code if code is not None else candidate_src,
         "config": config.to_dict(),
         "device": device_kind, "drk": __version__},
        sort_keys=True, default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def read_weaker_than_asked(result: EvalResult, config: EvalConfig, device_kind: str) -> bool:
    """Whether ``result`` is a CPU verdict on outputs the runner handed over (``fetch``) although the judge was to read
    them from the runner's memory itself: this host could not (no permission), and a module that rewrites its
    outputs when asked for them is ``correct`` through ``fetch`` (``attack_lazy_fetch``). Kept out of the cache, so
    another host sharing it, which can read memory, judges afresh (attacker review 27, reasoned). On a GPU every
    output comes through ``fetch`` on every host: no weaker read to tell apart."""
    return device_kind == "cpu" and config.direct_reads and result.outputs_read == "runner"


class ResultCache:
    """``get``/``put`` of :class:`EvalResult` by key under ``root/ab/abcdef....json``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> EvalResult | None:
        try:
            result = EvalResult.from_dict(json.loads(self._path(key).read_text()))
        except (OSError, ValueError, TypeError, AttributeError):
            return None  # missing, unreadable or corrupted entries are misses, never errors
        result.cached = True
        return result

    def put(self, key: str, result: EvalResult) -> bool:
        """Store ``result`` unless its status is in :data:`UNCACHED_STATUSES`, it carries a reason of
        :data:`UNCACHED_REASONS` or it is the environment's failure; returns whether it was stored."""
        # by the flag, never by the error's text: a candidate writes its own error text (one that began with
        # "[drk]" was never cached, so it was judged afresh on every resubmission: attacker review 7)
        if result.status in UNCACHED_STATUSES or result.env_error:
            return False
        if UNCACHED_REASONS.intersection(result.hack_reasons or []):
            return False
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w") as handle:
            json.dump(result.to_dict(), handle)
        os.replace(tmp, path)
        return True

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json"))
