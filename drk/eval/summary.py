"""Scores of an evaluation: Fast@p per turn and best-of-history with CIs, hacking ratio, PR, STTS curves.

Thin views over :mod:`drk.metrics` (which owns the definitions of Fast@p, best-of-history and the bootstrap),
shaped for the tables and figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from drk import metrics

_MODES = {"last": "last_turn", "best": "best_of_history"}


def records_frame(records) -> pd.DataFrame:
    """Records (EvalRecord objects, dicts or a DataFrame) as a DataFrame."""
    if isinstance(records, pd.DataFrame):
        return records
    return pd.DataFrame([r.to_dict() if hasattr(r, "to_dict") else dict(r) for r in records])


def fast_p_table(records, ps: Sequence[float] = metrics.FAST_P_THRESHOLDS, *, by_level: bool = False,
                 n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Fast@p at every turn, last turn and best of history, with problem-clustered bootstrap CIs.

    Returns:
        Columns ``p, turn, aggregation`` (``last_turn``/``best_of_history``), ``fast_p, ci_lo, ci_hi, n_samples``
        (fractions), plus ``level`` with ``by_level`` (one block per level).
    """
    df = records_frame(records)
    groups = df.groupby("level", dropna=False) if by_level else [(None, df)]
    blocks = []
    for level, rows in groups:
        summary = metrics.summarize(rows, ps=ps, n_boot=n_boot, seed=seed)
        block = summary[summary["kind"] == "fast@p"].rename(columns={"value": "fast_p"})
        block = block.assign(aggregation=block["mode"].map(_MODES))
        if by_level:
            block = block.assign(level=level)
        blocks.append(block)
    cols = (["level"] if by_level else []) + ["p", "turn", "aggregation", "fast_p", "ci_lo", "ci_hi", "n_samples"]
    return pd.concat(blocks, ignore_index=True)[cols]


def fast_p_long(records, model: str, *, turn: int | None = None, best_of_history: bool = False,
                ps: Sequence[float] = metrics.FAST_P_THRESHOLDS, source: str = "ours") -> pd.DataFrame:
    """Our Fast@p per level in the layout of the paper tables (``drk.data.paper.load_fast_p``).

    Args:
        records: one evaluation's records.
        model: the row label, e.g. ``"Qwen3-8B + drk TRLOO (ours)"``.
        turn: the scored turn (default: each sample's last; the paper reports turn 3).
        best_of_history: score each sample's best turn up to ``turn``.

    Returns:
        Columns ``model, level, p, fast_p, reference_mode, source, n_samples``.
    """
    df = records_frame(records)
    rows = []
    for level, by_level in df.groupby("level"):
        mode = by_level["reference_mode"].iloc[0] if "reference_mode" in by_level else "eager"
        n = len(metrics.select_turns(by_level, turn, best_of_history))
        for p in ps:
            value = metrics.fast_p(by_level, p, turn=turn, best_of_history=best_of_history)
            rows.append({"model": model, "level": int(level), "p": float(p), "fast_p": value,
                         "reference_mode": mode, "source": source, "n_samples": n})
    return pd.DataFrame(rows)


def eval_stats(records, *, tau: float = 0.3) -> dict[str, Any]:
    """Headline numbers of an evaluation: correct rate and hacking ratio at the last turn, PR distribution."""
    df = records_frame(records)
    return {
        "samples": int(df[["problem", "sample"]].drop_duplicates().shape[0]),
        "turns": int(df["turn"].max()),
        "correct_rate_last_turn": metrics.correct_rate(df),
        "correct_rate_best_of_history": metrics.correct_rate(df, best_of_history=True),
        "hacking_ratio_last_turn": metrics.hacking_ratio(df, turn=None),
        "hacking_ratio_all_turns": metrics.hacking_ratio(df),
        "profiling_ratio": metrics.profiling_ratio_summary(df, tau=tau),
        "status_counts": df["status"].value_counts().to_dict(),
    }


def stts_curves(records, *, p: float = 1.2, kind: str = "fast@p", n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Figure 6 data: last-turn and best-of-history scores vs turn, one block per ``context`` in the records.

    Args:
        kind: ``"fast@p"`` (Fast@``p``) or ``"correct"`` (share correct and not hacked; what a CPU run can show).

    Returns:
        Columns ``context, turn, aggregation, kind, p, value, ci_lo, ci_hi`` (fractions).
    """
    if kind not in ("fast@p", "correct"):
        raise ValueError(f"kind={kind!r}: choose 'fast@p' or 'correct'")
    df = records_frame(records)
    contexts = df["context"] if "context" in df else pd.Series("vanilla", index=df.index)
    blocks = []
    for context, rows in df.groupby(contexts, sort=False):
        summary = metrics.summarize(rows, ps=[p], n_boot=n_boot, seed=seed)
        block = summary[summary["kind"] == kind]
        blocks.append(block.assign(context=context, aggregation=block["mode"].map(_MODES), p=p))
    cols = ["context", "turn", "aggregation", "kind", "p", "value", "ci_lo", "ci_hi"]
    return pd.concat(blocks, ignore_index=True)[cols]
