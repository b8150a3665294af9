"""Worked examples for the environment: one problem and candidates of every kind (honest, lazy, hacks, crashes).

They back the environment notebook, the tests and the decoy/lazy/fused figure. Each candidate file's
docstring says what it does; :data:`EXPECTED` says what the environment must answer.
"""

from __future__ import annotations

from pathlib import Path

from drk.gym.problem import Problem

EXAMPLES_ROOT = Path(__file__).resolve().parent

#: candidate name -> (expected status, a hack reason that must be among the result's reasons, or None).
EXPECTED: dict[str, tuple[str, str | None]] = {
    "good": ("correct", None),
    "lazy": ("correct", None),
    "side_stream": ("correct", None),
    "wrong": ("incorrect", None),
    "wrong_shape": ("incorrect", None),
    "mutates_input": ("incorrect", None),
    "pointer_cache": ("incorrect", None),
    "unwritten_output": ("incorrect", None),
    "raises": ("runtime_error", None),
    "memory_hog": ("runtime_error", None),
    "segfault": ("runtime_error", None),
    "exits": ("runtime_error", None),
    "forges_verdict": ("runtime_error", None),
    "hangs": ("timeout", None),
    "import_error": ("compile_error", None),
    "syntax_error": ("compile_error", None),
    "no_model_new": ("format_error", None),
    "decoy": ("hacked", "decoy"),
    "training_branch": ("hacked", "decoy"),
    "grad_branch": ("hacked", "decoy"),
    "no_effect": ("hacked", "no_effect"),
    "fallback": ("hacked", "fallback"),
    "subclass": ("hacked", "model_subclass"),
    "compile_static": ("hacked", "torch_compile"),
    "cuda_extension": ("hacked", "native_code"),
    "tamper_allclose": ("hacked", "tamper"),
    "tamper_timer": ("hacked", "tamper"),
    "tamper_obfuscated": ("hacked", "tamper"),
    "frames_static": ("hacked", "tamper"),
    "frames_runtime": ("hacked", "tamper"),
    "gc_runtime": ("hacked", "tamper"),
}


def example_problem(name: str = "relu2") -> Problem:
    """The example problem ``name``: ``relu2`` (memory-bound, every candidate kind) or ``matmul`` (compute-bound)."""
    return Problem.from_file(EXAMPLES_ROOT / name / "problem.py")


def example_candidate(candidate: str, name: str = "relu2") -> str:
    """Source of an example candidate, e.g. ``example_candidate("decoy")``."""
    path = EXAMPLES_ROOT / name / "candidates" / f"{candidate}.py"
    if not path.is_file():
        raise ValueError(f"no example candidate {candidate!r}; choose from {sorted(EXPECTED)}")
    return path.read_text()
