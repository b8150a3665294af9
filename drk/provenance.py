"""Where an artifact came from: the commit and version stamped next to every checkpoint, log, record and figure."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_sha() -> str | None:
    """HEAD of the checkout drk runs from, or None (not a git checkout, no commit yet, or no git)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None
