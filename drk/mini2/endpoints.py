"""The endpoints of ``results/mini2/PLAN.md``: what one held-out evaluation point records, and how a run's number
is made from its points (issue 12, items 6-7).

**An evaluation point** (:func:`heldout_point`) plays ``eval_samples`` episodes per held-out task for ``max_turns``
turns (3: the training horizon), vanilla context, temperature ``eval_temperature``, the judge with the hacking check
on, episodes running every turn (the paper's evaluation: each turn's answer is scored). It stores, for every metric,
the per-problem numerator and denominator (:func:`point_counts`), so the problem-clustered bootstrap can resample
held-out problems later without the records:

- ``fast@{p}/turn{t}``: the answer *at* turn t is correct, not hacked and ``speedup >= p`` (share of samples);
- ``fast@{p}/best_turn{t}``: the best of turns <= t is (best of history);
- ``correct/turn{t}``, ``hacked/turn{t}`` (share of turn-t samples flagged hacked);
- ``pr_correct/turn{t}``: the mean profiling ratio of the correct turn-t answers (numerator: the sum of their PR).

**A run's number** (:func:`run_observations`): each metric averaged over the evaluation points in the last 20 % of
RL steps (:func:`window_start`), a point's value being the pooled ratio over its problems; the training reward
(``train_reward``) is ``rl/reward_mean`` averaged over the same steps. The primary endpoint is
``fast@1.2/turn{T}`` with T = ``Mini2Config.max_turns`` (3).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from drk.jsonl import read_jsonl

#: Fast@p thresholds every point records (the plan's 1.2 and the secondary 1).
POINT_PS: tuple[float, ...] = (1.0, 1.2)
#: The last 1/WINDOW_DIVISOR of RL steps is the endpoint window (PLAN.md: the last 20 %).
WINDOW_DIVISOR = 5
#: STTS evaluation of PLAN.md: 8 turns, best-w context with w = 4, against vanilla history.
STTS_TURNS, STTS_WINDOW = 8, 4
STTS_CONTEXTS: tuple[str, ...] = ("vanilla", "best_w")


def primary(turns: int = 3) -> str:
    """The primary endpoint's metric name: Fast@1.2 of the answer at the last training turn."""
    return f"fast@1.2/turn{turns}"


def stts_metric(turns: int = STTS_TURNS) -> str:
    """The STTS claim's metric: best-of-history Fast@1.2 by the last STTS turn."""
    return f"fast@1.2/best_turn{turns}"


def window_start(steps: int) -> int:
    """The endpoint window is the steps ``> window_start(steps)``: the last ``ceil(steps / 5)`` (81-100 of 100)."""
    if steps < 1:
        raise ValueError(f"steps={steps}: a run has at least one step")
    return steps - -(-steps // WINDOW_DIVISOR)


def eval_steps(steps: int, every: int) -> list[int]:
    """The steps after which a run evaluates on the held-out tasks: 0 (the SFT policy), every ``every``-th step and
    the last; none when ``every`` is 0."""
    if every == 0:
        return []
    return sorted({0, *range(every, steps + 1, every), steps})


# --- one evaluation point ---------------------------------------------------------------------------------------


def _by_problem(values: pd.Series, rows: pd.DataFrame, problems: list[str]) -> list[list[float]]:
    """``[num, den]`` per problem: the sum of the non-NaN ``values`` of each problem's rows and their count."""
    frame = pd.DataFrame({"problem": rows["problem"].to_numpy(), "v": values.astype(float).to_numpy()})
    grouped = frame.dropna().groupby("problem")["v"]
    num = grouped.sum().reindex(problems, fill_value=0.0)
    den = grouped.count().reindex(problems, fill_value=0)
    return [num.astype(float).tolist(), den.astype(float).tolist()]


def point_counts(records: list[dict[str, Any]], turns: int) -> dict[str, Any]:
    """Every metric of the module docstring at turns ``1..turns``, per problem.

    Returns:
        ``{"problems": [...], "counts": {metric: [num, den]}, "metrics": {metric: pooled value}}``; ``num`` and
        ``den`` are lists over ``problems`` (sorted names); a pooled value is ``sum(num) / sum(den)`` (NaN when
        ``den`` is all 0, e.g. no correct answer to take a PR from).
    """
    from drk.metrics import fast_indicator, select_turns

    problems = sorted({r["problem"] for r in records})
    counts: dict[str, list[list[float]]] = {}
    for t in range(1, turns + 1):
        for mode in ("last", "best"):
            rows = select_turns(records, t, best_of_history=mode == "best")
            tag = f"turn{t}" if mode == "last" else f"best_turn{t}"
            for p in POINT_PS:
                counts[f"fast@{p:g}/{tag}"] = _by_problem(fast_indicator(rows, p), rows, problems)
            counts[f"correct/{tag}"] = _by_problem(rows["ok"], rows, problems)
            if mode == "last":
                counts[f"hacked/{tag}"] = _by_problem(rows["hacked"], rows, problems)
                pr = rows["coverage"].where(rows["ok"])  # NaN unless correct (and measured)
                counts[f"pr_correct/{tag}"] = _by_problem(pr, rows, problems)
    metrics = {name: _ratio(sum(num), sum(den)) for name, (num, den) in counts.items()}
    return {"problems": problems, "counts": counts, "metrics": metrics}


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def heldout_point(policy, tasks, verdicts, cfg, step: int) -> dict[str, Any]:
    """One evaluation point of a run (module docstring): ``{"step", "turns", "problems", "counts", "metrics"}``.

    The sampling seed is derived from ``(cfg.seed, step)`` only, so every variant of one seed is evaluated with the
    same random stream at the same step, and evaluating never touches the training sampler's stream.
    """
    from drk.mini2.evaluate import EvalSettings, evaluate

    settings = EvalSettings(samples=cfg.eval_samples, turns=cfg.max_turns, context="vanilla",
                            greedy=cfg.eval_greedy, temperature=cfg.eval_temperature,
                            seed=cfg.seed * 1_000_003 + step)
    records = evaluate(policy, tasks, verdicts, settings)
    return {"step": step, "turns": cfg.max_turns, **point_counts(records, cfg.max_turns)}


# --- a run's numbers --------------------------------------------------------------------------------------------


@dataclass
class Observation:
    """One metric of one run: its value, and the per-problem counts of the points averaged into it.

    ``num``/``den`` have shape (points, problems); the value is the mean over points of ``num.sum(1) / den.sum(1)``
    (points with ``den`` all 0 are skipped). A value without counts (the training reward) cannot be bootstrapped.
    """

    value: float
    problems: tuple[str, ...] = ()
    num: np.ndarray | None = field(default=None, repr=False)
    den: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def from_points(cls, points: list[dict[str, Any]], metric: str) -> Observation:
        problems = tuple(points[0]["problems"])
        if any(tuple(p["problems"]) != problems for p in points):
            raise ValueError(f"evaluation points of one run were taken on different problems ({metric})")
        num = np.array([p["counts"][metric][0] for p in points], dtype=float)  # (K, P)
        den = np.array([p["counts"][metric][1] for p in points], dtype=float)
        return cls(float(pooled_mean(num.sum(1), den.sum(1))), problems, num, den)

    def resampled(self, weights: np.ndarray, problems: list[str]) -> np.ndarray:
        """The value under each row of ``weights`` (B, len(problems)): how often each problem was drawn."""
        if self.num is None:
            return np.full(len(weights), np.nan)
        index = [problems.index(p) for p in self.problems]
        w = weights[:, index]  # (B, P)
        return pooled_mean(w @ self.num.T, w @ self.den.T)  # (B,)


def pooled_mean(num: np.ndarray, den: np.ndarray) -> np.ndarray | float:
    """Mean over the last axis of ``num / den``, skipping entries with ``den == 0`` (NaN when all are)."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: NaN is the answer
        return np.nanmean(np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan), axis=-1)


def run_config(run_dir: str | Path) -> dict[str, Any]:
    """A run's ``config.json`` (``variant``, ``mini2``: the Mini2Config, ``rl``: the RLConfig)."""
    return json.loads((Path(run_dir) / "config.json").read_text())


def run_observations(run_dir: str | Path) -> dict[str, Observation]:
    """Every metric of one RL run over its endpoint window (module docstring), plus ``train_reward``.

    Raises:
        ValueError: the run has no held-out evaluation point in the window (``eval_every`` 0 or too coarse).
    """
    run_dir = Path(run_dir)
    steps = int(run_config(run_dir)["rl"]["steps"])
    start = window_start(steps)
    points = read_jsonl(run_dir / "heldout.jsonl") if (run_dir / "heldout.jsonl").is_file() else []
    points = [p for p in points if p["step"] > start]
    if not points:
        raise ValueError(f"{run_dir}: no held-out evaluation point after step {start} of {steps} (the last 20 %); "
                         "run with eval_every >= 1 and <= steps / 5")
    out = {metric: Observation.from_points(points, metric) for metric in points[0]["counts"]}
    log = [row for row in read_jsonl(run_dir / "log.jsonl") if row["step"] > start]
    rewards = [row["rl/reward_mean"] for row in log if row.get("rl/reward_mean") is not None]
    out["train_reward"] = Observation(float(np.mean(rewards)) if rewards else float("nan"))
    return out


def stts_observations(stts_dir: str | Path) -> dict[str, dict[str, Observation]]:
    """The STTS evaluation of one checkpoint: ``{context: {metric: Observation}}`` (one point each)."""
    rows = read_jsonl(Path(stts_dir) / "stts.jsonl")
    return {row["context"]: {m: Observation.from_points([row], m) for m in row["counts"]} for row in rows}


__all__ = ["POINT_PS", "STTS_CONTEXTS", "STTS_TURNS", "STTS_WINDOW", "Observation", "eval_steps", "heldout_point",
           "point_counts", "pooled_mean", "primary", "run_config", "run_observations", "stts_metric",
           "stts_observations", "window_start"]
