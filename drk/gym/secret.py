"""The judge's secret: makes hidden seeds unpredictable to candidates yet the same for the same evaluation.

Timing inputs, probe inputs and checksum weights are drawn from a stream keyed by HMAC(secret, problem, candidate,
config). The same (problem, candidate, config) on the same installation therefore sees the same seeds (verdicts are
repeatable), while a candidate, which never holds the secret, cannot predict them.

The secret is ``DRK_JUDGE_SECRET`` if set, else a random key kept in ``~/.cache/drk/judge_secret`` (mode 0600; the
sandbox's uid cannot read it), else a per-process key (then seeds differ between processes).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any


@functools.lru_cache(maxsize=1)
def judge_secret() -> bytes:
    if os.environ.get("DRK_JUDGE_SECRET"):
        return os.environ["DRK_JUDGE_SECRET"].encode()
    path = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "drk" / "judge_secret"
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        pass
    key = secrets.token_bytes(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(key.hex())
        os.replace(tmp, path)
        return bytes.fromhex(path.read_text().strip())  # a concurrent writer may have won: use what is there
    except (OSError, ValueError):
        return key


def evaluation_key(secret: bytes, *material: Any) -> bytes:
    """The key of one evaluation's seed stream."""
    digest = hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).digest()
    return hmac.new(secret, digest, hashlib.sha256).digest()


class SeedStream:
    """Unpredictable, reproducible integers: HMAC(key, counter)."""

    def __init__(self, key: bytes) -> None:
        self._key, self._count = key, 0

    def next(self, bits: int = 40) -> int:
        self._count += 1
        block = hmac.new(self._key, self._count.to_bytes(8, "big"), hashlib.sha256).digest()
        return int.from_bytes(block[:8], "big") >> (64 - bits)

    def below(self, n: int) -> int:
        return self.next(48) % n
