"""The bundled problem suite: KernelBench-format references (levels 1-3) and our Triton solutions.

Layout::

    drk/problems/level{1,2,3}/NN_Name.py             the reference (Model, get_inputs, get_init_inputs, CPU_SIZES)
    drk/problems/solutions/level{N}/NN_Name.py       a correct Triton solution (real kernels doing the work)
    drk/problems/solutions/level{N}/NN_Name_lazy.py  for some: correct, but only a minor op in Triton
    drk/problems/gpu_results.csv                     each solution's GPU speedup and profiling ratio under both
                                                     timing policies, measured on an H200 by benchmarks/suite_gpu.py
                                                     (:func:`load_gpu_results`)

Load references with ``drk.gym.load_problems("drk:level1")``; solutions with :func:`solution_source`. On a CPU the
environment applies each problem's ``CPU_SIZES`` so the Triton interpreter evaluates it in seconds.
"""

from __future__ import annotations

from pathlib import Path

from drk.gym.problem import Problem

PROBLEMS_ROOT = Path(__file__).resolve().parent
SOLUTION_KINDS = ("fused", "lazy")
GPU_RESULTS = PROBLEMS_ROOT / "gpu_results.csv"


def solution_path(problem: Problem, kind: str = "fused") -> Path | None:
    """Path of the bundled solution of ``kind`` for a bundled problem, or ``None`` if there is none."""
    if kind not in SOLUTION_KINDS:
        raise ValueError(f"kind={kind!r}: choose one of {SOLUTION_KINDS}")
    if problem.level is None:
        return None
    suffix = "" if kind == "fused" else "_lazy"
    path = PROBLEMS_ROOT / "solutions" / f"level{problem.level}" / f"{problem.name}{suffix}.py"
    return path if path.is_file() else None


def solution_source(problem: Problem, kind: str = "fused", *, required: bool = False) -> str | None:
    """Source of the bundled solution of ``kind`` (``"fused"`` or ``"lazy"``), or ``None`` when there is none.

    Raises:
        FileNotFoundError: with ``required=True``, when there is none (e.g. a problem loaded from a KernelBench
            checkout), for callers that cannot go on without it.
    """
    path = solution_path(problem, kind)
    if path is None and required:
        raise FileNotFoundError(f"no bundled {kind} solution for problem {problem.key}")
    return path.read_text() if path else None


def load_gpu_results(path: str | Path = GPU_RESULTS, reference_mode: str | None = None):
    """The shipped GPU measurements of the bundled solutions as a ``pandas.DataFrame``, with ``.attrs["notes"]``.

    One row per (solution, timing policy, reference mode): ``label`` (problem key), ``kind`` (fused/lazy),
    ``timing_policy`` (``drk``: L2 flush + medians; ``authors``: warm mean, as the paper's code),
    ``reference_mode`` (``eager`` or ``compile``: the paper's Table 2 reference), ``status``, ``speedup``,
    ``coverage`` (profiling ratio), ``ref_ms``, ``kernel_ms``, ``gpu``. The ``#`` header lines (GPU, date,
    exclusions) are kept in ``attrs["notes"]``. ``reference_mode``: only that mode's rows and notes (a note that
    names the other mode's reference is left out).
    """
    import pandas as pd

    path = Path(path)
    notes = [line[1:].strip() for line in path.read_text().splitlines() if line.startswith("#")]
    frame = pd.read_csv(path, comment="#")
    if reference_mode is not None:
        frame = frame[frame["reference_mode"] == reference_mode].reset_index(drop=True)
        notes = [n for n in notes if not any(f"{other} reference" in n for other in ("eager", "compile")
                                             if other != reference_mode)]
    frame.attrs["notes"] = notes
    return frame


def suite_profiling_cases(label: str = "L2/01_Matmul_Bias_ReLU", policy: str = "drk") -> list[dict]:
    """Figure 10's lazy and fused cases of one bundled problem from the shipped GPU measurements
    (:func:`load_gpu_results`, eager reference, as the paper's figure), as rows for
    :func:`drk.figures.profiling.plot_profiling_examples`; the suite has no decoy (a decoy is not a solution)."""
    frame = load_gpu_results(reference_mode="eager")
    rows = frame[(frame["label"] == label) & (frame["timing_policy"] == policy)]
    names = {"lazy": "lazy_optimization", "fused": "better_fusion"}
    out = [{"case": names[r.kind], "status": r.status, "speedup": r.speedup, "coverage": r.coverage,
            "reference_runtime_ms": r.ref_ms, "kernel_runtime_ms": r.kernel_ms}
           for r in rows.itertuples() if r.kind in names]
    if not out:
        raise KeyError(f"no {policy!r} measurement of {label!r} in {GPU_RESULTS}")
    return out


def timing_policy_fast_p(frame, ps=(1.0, 1.2, 1.5, 2.0)):
    """Fast@p of the measured solutions per timing policy, overall and per level (issue 6's comparison).

    Each (solution, policy) row of :func:`load_gpu_results` (or ``benchmarks/suite_gpu.py``'s frame) counts as
    one sample: the same kernels, timed two ways, so any difference is the timer's.

    Returns:
        A ``DataFrame`` with columns ``timing_policy, level`` ("all" or 1/2/3), ``n`` and ``Fast@p`` per ``p``
        (fractions).
    """
    import pandas as pd

    from drk.metrics import fast_p

    rows = []
    for policy, by_policy in frame.groupby("timing_policy", sort=False):
        for level, sub in [("all", by_policy), *by_policy.groupby("level")]:
            records = [{"problem": f"{label}:{kind}", "sample": 0, "turn": 1, "correct": bool(correct),
                        "hacked": bool(hacked), "speedup": None if pd.isna(speedup) else float(speedup)}
                       for label, kind, correct, hacked, speedup in
                       zip(sub["label"], sub["kind"], sub["correct"], sub["hacked"], sub["speedup"])]
            rows.append({"timing_policy": policy, "level": level, "n": len(records),
                         **{f"Fast@{p:g}": fast_p(records, p) for p in ps}})
    return pd.DataFrame(rows)

