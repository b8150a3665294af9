"""Where an artifact came from: the commit and versions stamped next to every checkpoint, log, record and figure.

:func:`write_provenance` is the one writer of those sidecar files (a run's ``drk_config.json``, an evaluation's
``<records>.config.json``, a figure's data ``<stem>.json``); :func:`caption_stamp` is the line a figure caption
ends with.
"""

from __future__ import annotations

import json
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any

#: The checkout drk runs from: captions name data files relative to it.
REPO_ROOT = Path(__file__).resolve().parent.parent

#: Libraries whose installed versions every stamp records (when installed; read from package metadata, so
#: stamping never imports them).
LIBRARIES: tuple[str, ...] = ("torch", "transformers", "trl", "triton")


def git_sha() -> str | None:
    """HEAD of the checkout drk runs from, or None (not a git checkout, no commit yet, or no git)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def provenance() -> dict[str, Any]:
    """``git_sha`` (``"unknown"`` outside a checkout), ``drk_version``, ``python``, ``written_at`` and the installed
    version of each of :data:`LIBRARIES` (None when absent)."""
    import drk

    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"git_sha": git_sha() or "unknown", "drk_version": drk.__version__, "python": platform.python_version(),
            "written_at": time.strftime("%Y-%m-%dT%H:%M:%S"), **versions}


def write_provenance(path: str | Path, payload: dict[str, Any]) -> Path:
    """Write ``payload`` plus :func:`provenance` as indented JSON at ``path`` (folders created); returns ``path``.

    The payload's own keys come first and are never overwritten: a sidecar reads as "what was run", then "by which
    code". Values JSON cannot hold are written as strings.
    """
    path, stamp = Path(path), provenance()
    clash = sorted(set(payload) & set(stamp))
    if clash:
        raise ValueError(f"payload keys {clash} clash with the provenance stamp; rename them")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**payload, **stamp}, indent=2, default=str) + "\n")
    return path


def caption_stamp() -> str:
    """The suffix of every figure caption: `` [made by drk <version>, git <sha>]``."""
    import drk

    return f" [made by drk {drk.__version__}, git {git_sha() or 'uncommitted'}]"


def display_path(path: str | Path) -> str:
    """``path`` as captions, table headers and sidecars show it: relative to the working directory or the
    repository when it lies inside one of them, else only its last three parts (``ours/stts/vanilla.jsonl``).
    Never a machine's absolute path.
    """
    resolved = Path(path).resolve()
    for root in (Path.cwd().resolve(), REPO_ROOT):
        try:
            return str(resolved.relative_to(root))
        except ValueError:
            continue
    return str(Path(*resolved.parts[1:][-3:]))  # without the root: /tmp/c shows as tmp/c


def display_command(argv: list[str]) -> str:
    """A command line as a sidecar records it: absolute paths shown by :func:`display_path` (no machine paths)."""
    return " ".join(display_path(a) if a.startswith("/") else a for a in argv)
