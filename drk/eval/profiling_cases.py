"""Figure 2 (right) / Figure 10 on our environment: a decoy, a lazy and a fused candidate for one problem."""

from __future__ import annotations

from typing import Any

import pandas as pd

from drk.eval.replay import decoy_source
from drk.problems import solution_source

#: Case names; ``lazy_optimization`` and ``better_fusion`` match the paper's Figure 10 CSV.
CASES: tuple[str, ...] = ("decoy", "lazy_optimization", "better_fusion")


def profiling_case_sources(problem: Any) -> dict[str, str]:
    """Candidate modules per case: a never-launched decoy kernel, the bundled lazy and fused solutions.

    Raises:
        FileNotFoundError: the problem has no bundled ``_lazy`` solution (level-2 problems 01, 02, 05, 06 do).
    """
    return {
        "decoy": decoy_source(problem),
        "lazy_optimization": solution_source(problem, "lazy", required=True),
        "better_fusion": solution_source(problem, "fused", required=True),
    }


def measure_profiling_cases(problem: Any, evaluator) -> pd.DataFrame:
    """Evaluate the three cases and return the figure's rows.

    Args:
        problem: a bundled ``drk.gym.Problem`` with a lazy solution, e.g. ``load_problems("drk:level2/01")[0]``.
        evaluator: ``(problem, source)`` pairs -> ``EvalResult`` list (``drk.eval.runner.default_evaluator``).

    Returns:
        Columns ``case, status, hacked, speedup, coverage, device, source="ours"``; speedup and coverage are
        None on CPU.
    """
    sources = profiling_case_sources(problem)
    results = evaluator([(problem, src) for src in sources.values()])
    rows = [{"case": case, "status": r.status, "hacked": r.hacked, "speedup": r.speedup, "coverage": r.coverage,
             "device": r.device, "source": "ours"} for case, r in zip(sources, results, strict=True)]
    return pd.DataFrame(rows)
