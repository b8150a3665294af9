"""JSON Lines, the one format of drk's logs, episodes, records and replay files: one reader, one appender.

Readers that must name the line of a malformed row (``drk sft`` data, scripted replies, ``drk eval`` candidates)
keep their own loops: they report errors per line instead of stopping at the first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """All JSON objects of a JSONL file, in order (blank lines skipped)."""
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def append_jsonl(path: str | Path, rows: Iterable[Any], *, default: Callable[[Any], Any] | None = None) -> Path:
    """Append ``rows`` to ``path`` as one JSON object per line (the folder is created); returns ``path``.

    ``default`` is ``json.dumps``'s fallback for values JSON cannot hold (e.g. ``str``).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.writelines(json.dumps(row, default=default) + "\n" for row in rows)
    return path
