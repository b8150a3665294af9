"""Problems in KernelBench form, and loading them from the bundled suite, a KernelBench checkout or a dataset."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_REQUIRED = {"Model": ast.ClassDef, "get_inputs": ast.FunctionDef, "get_init_inputs": ast.FunctionDef}
_LEVEL_DIR = re.compile(r"^level(\d+)$")
_ID_PREFIX = re.compile(r"^(\d+)_")


@dataclass(frozen=True)
class Problem:
    """A PyTorch reference: a module defining ``Model``, ``get_inputs()`` and ``get_init_inputs()``.

    ``source`` is the whole module text; it is only ever executed in processes of drk's own, never the caller's: an
    evaluation's judge, and the child that reads its sizes for a GPU pool (:mod:`drk.gym.footprint`). A module may
    define ``CPU_SIZES = {...}``: overrides of its module-level size constants applied before building inputs when
    evaluating on CPU under the Triton interpreter (so every problem runs there in seconds).
    """

    name: str
    source: str
    level: int | None = None
    problem_id: int | None = None
    path: str | None = None

    @classmethod
    def from_source(cls, source: str, name: str = "problem", *, level: int | None = None,
                    problem_id: int | None = None, path: str | None = None) -> Problem:
        """Validate and wrap a reference module's source.

        Raises:
            ValueError: the source does not parse, or lacks ``Model``, ``get_inputs`` or ``get_init_inputs``.
        """
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            raise ValueError(f"problem {name!r}: source does not parse: {exc.msg} (line {exc.lineno})") from exc
        except (RecursionError, MemoryError, ValueError) as exc:  # nested too deeply, or a NUL byte
            raise ValueError(f"problem {name!r}: source does not parse: {type(exc).__name__}") from None
        defined = {node.name: type(node) for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
        missing = [what for what, kind in _REQUIRED.items() if defined.get(what) is not kind]
        if missing:
            raise ValueError(
                f"problem {name!r} is not in KernelBench form: missing {missing} "
                "(needs `class Model(nn.Module)`, `def get_inputs()`, `def get_init_inputs()` at module level)"
            )
        return cls(name=name, source=source, level=level, problem_id=problem_id, path=path)

    @classmethod
    def from_file(cls, path: str | Path) -> Problem:
        """Load a problem file; level and id are read from a ``levelN/ID_Name.py`` layout when present."""
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"problem file {str(path)!r} does not exist")
        level_match = _LEVEL_DIR.match(path.parent.name)
        id_match = _ID_PREFIX.match(path.name)
        return cls.from_source(
            path.read_text(),
            name=path.stem,
            level=int(level_match.group(1)) if level_match else None,
            problem_id=int(id_match.group(1)) if id_match else None,
            path=str(path),
        )

    @property
    def key(self) -> str:
        """A short unique label such as ``L2/07_Matmul_Bias_ReLU``."""
        return f"L{self.level}/{self.name}" if self.level is not None else self.name


BUNDLED_ROOT = Path(__file__).resolve().parent.parent / "problems"


def load_problems(spec: Any, *, columns: Mapping[str, str] | None = None, split: str | None = None) -> list[Problem]:
    """Load problems by spec, sorted by (level, id, name).

    Args:
        spec: ``"drk:all"``, ``"drk:level1"`` (bundled suite), ``"drk:level2/03"`` (one bundled problem by id),
            a KernelBench checkout or one of its level folders (``KernelBench/level2``; files ``ID_Name.py``),
            a single problem file; or a dataset with one problem per row (:mod:`drk.gym.datasets`): a
            ``.parquet``/``.jsonl``/``.csv`` file, a ``datasets.Dataset``/``DatasetDict`` or its
            ``save_to_disk`` folder, or ``"hf:OWNER/NAME[:SPLIT]"`` (``datasets.load_dataset``).
        columns: datasets only: drk field (``code``, ``name``, ``level``, ``problem_id``) -> column, for layouts
            other than KernelBench's (``code``, ``level``, ``name``, ``problem_id``).
        split: datasets only: one split of a ``DatasetDict`` (default: all splits).

    Raises:
        ValueError: unknown spec, missing path, no problems found, or a dataset row that is not a problem.
    """
    from drk.gym import datasets  # imported here: drk.gym.datasets builds on Problem

    if datasets.is_dataset_spec(spec):
        return datasets.load_dataset_problems(spec, columns=columns, split=split)
    if columns is not None or split is not None:
        raise ValueError(f"columns/split apply to datasets only, not to {str(spec)!r}")
    spec_str = str(spec)
    if spec_str.startswith("drk:"):
        return _load_bundled(spec_str[4:])
    return _load_path(Path(spec_str))


def _load_bundled(selector: str) -> list[Problem]:
    level_part, _, id_part = selector.partition("/")
    if level_part == "all":
        problems = _load_path(BUNDLED_ROOT)
    elif _LEVEL_DIR.match(level_part):
        problems = _load_path(BUNDLED_ROOT / level_part)
    else:
        raise ValueError(f"unknown bundled spec 'drk:{selector}': use drk:all, drk:level1..3 or drk:level2/03")
    if id_part:
        problems = [p for p in problems if p.problem_id == int(id_part)]
        if not problems:
            raise ValueError(f"no bundled problem 'drk:{selector}'")
    return problems


def _load_path(path: Path) -> list[Problem]:
    if path.is_file():
        return [Problem.from_file(path)]
    if not path.is_dir():
        raise ValueError(f"problem spec {str(path)!r}: no such file or folder (or use drk:all / drk:levelN)")
    level_dirs = sorted(p for p in path.iterdir() if p.is_dir() and _LEVEL_DIR.match(p.name))
    files = [f for d in level_dirs for f in d.glob("*.py")] if level_dirs else list(path.glob("*.py"))
    problems = [Problem.from_file(f) for f in files if not f.name.startswith("_")]
    if not problems:
        raise ValueError(f"no problem files (*.py) under {str(path)!r}")
    return sorted(problems, key=lambda p: (p.level or 0, p.problem_id or 0, p.name))
