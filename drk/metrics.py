"""Evaluation metrics: Fast@p, correctness, compile and hacking rates, profiling ratios, bootstrap CIs.

A *record* is one evaluated turn: a dict (or a DataFrame row, or an object with ``to_dict()``) with
``problem``, ``sample`` (which of the samples drawn for that problem), ``turn``, ``correct`` (correct and not
hacked), ``hacked`` and ``speedup`` (None on CPU: never counts as fast), and optionally ``status`` and
``coverage`` (the profiling ratio). A *sample* is one ``(problem, sample)`` episode; every rate here is a share
of samples (paper Sec. "Evaluation"):

    Fast@p = #(correct and not hacked and speedup >= p) / #all samples

Which turn of a sample is scored is chosen by ``turn`` and ``best_of_history`` (see :func:`select_turns`).
Confidence intervals resample whole problems (the samples of one problem are correlated), with a percentile
bootstrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

#: The speedup thresholds the paper reports.
FAST_P_THRESHOLDS: tuple[float, ...] = (1.0, 1.2, 1.5, 2.0)

#: Statuses of a candidate that never compiled.
NOT_COMPILED: tuple[str, ...] = ("format_error", "compile_error", "missing")


def select_turns(records, turn: int | str | None = None, best_of_history: bool = False) -> pd.DataFrame:
    """One scored row per sample (or per record with ``turn="all"``).

    Args:
        records: list of dicts / objects with ``to_dict()``, or a DataFrame (see the module docstring).
        turn: an int N scores each sample's answer at turn N; a sample with no record at N counts as a
            miss (status ``"missing"``), never as its answer from another turn. None scores each sample's
            last turn. ``"all"`` keeps every record as its own sample (the training view: every turn is a
            training sample).
        best_of_history: score each sample's best turn among turns <= N (all turns if ``turn`` is None):
            any correct turn beats none, then the highest speedup, then the earliest turn.

    Returns:
        DataFrame with columns problem, sample, turn, ok (correct and not hacked), hacked, speedup (NaN if
        unmeasured), coverage, status; one row per sample.
    """
    df = _normalise(records)
    if turn == "all":
        if best_of_history:
            raise ValueError("best_of_history needs a turn bound (int or None), not turn='all'")
        return df
    if turn is not None and not isinstance(turn, (int, np.integer)):
        raise ValueError(f"turn={turn!r}: must be an int, None (last turn) or 'all'")
    samples = df[["problem", "sample"]].drop_duplicates()
    if best_of_history:
        pool = df if turn is None else df[df["turn"] <= turn]
        rank = pool.assign(_fast=pool["speedup"].fillna(-np.inf), _t=-pool["turn"])
        best = rank.sort_values(["ok", "_fast", "_t"], ascending=False).drop_duplicates(["problem", "sample"])
        chosen = best.drop(columns=["_fast", "_t"])
    elif turn is None:
        chosen = df.sort_values("turn").drop_duplicates(["problem", "sample"], keep="last")
    else:
        chosen = df[df["turn"] == turn]
    out = samples.merge(chosen, on=["problem", "sample"], how="left")
    return _fill_missing(out, turn)


def fast_p(records, p: float, turn: int | str | None = None, best_of_history: bool = False) -> float:
    """Fast@p: share of samples that are correct, not hacked and at least ``p`` times faster.

    Args:
        records: see the module docstring.
        p: speedup threshold (1, 1.2, 1.5, 2 in the paper).
        turn, best_of_history: which turn of each sample is scored (:func:`select_turns`).

    Returns:
        A fraction in [0, 1]; NaN for no records.

    >>> recs = [dict(problem="a", sample=0, turn=1, correct=True, hacked=False, speedup=1.3),
    ...         dict(problem="a", sample=1, turn=1, correct=True, hacked=False, speedup=0.9)]
    >>> fast_p(recs, 1.2), fast_p(recs, 0.5)
    (0.5, 1.0)
    """
    return _mean(fast_indicator(select_turns(records, turn, best_of_history), p))


def correct_rate(records, turn: int | str | None = None, best_of_history: bool = False) -> float:
    """Share of samples correct and not hacked (Fast@0)."""
    return _mean(select_turns(records, turn, best_of_history)["ok"])


def compile_rate(records, turn: int | str | None = None) -> float:
    """Share of samples whose candidate compiled (status not in ``NOT_COMPILED``); needs ``status``."""
    return _mean(compiled_indicator(select_turns(records, turn)))


def hacking_ratio(records, turn: int | str | None = "all") -> float:
    """Share of samples flagged by the hacking check; by default over every record (the training view)."""
    return _mean(select_turns(records, turn)["hacked"])


def profiling_ratio_summary(records, turn: int | str | None = "all", tau: float = 0.3) -> dict[str, float]:
    """Distribution of the profiling ratio PR over correct samples with a measured PR.

    Returns:
        dict with n, mean, q10, q25, median, q75, q90 and ``frac_below_tau`` (the share PRS would thin).
    """
    rows = select_turns(records, turn)
    pr = rows.loc[rows["ok"], "coverage"].dropna().to_numpy(dtype=float)
    if pr.size == 0:
        return (
            {"n": 0}
            | {k: float("nan") for k in ("mean", "q10", "q25", "median", "q75", "q90")}
            | {"frac_below_tau": float("nan")}
        )
    q = np.quantile(pr, [0.1, 0.25, 0.5, 0.75, 0.9])
    names = ("q10", "q25", "median", "q75", "q90")
    return (
        {"n": int(pr.size), "mean": float(pr.mean())}
        | dict(zip(names, map(float, q), strict=True))
        | {"frac_below_tau": float(np.mean(pr < tau))}
    )


def fast_indicator(rows: pd.DataFrame, p: float) -> pd.Series:
    """Per-row bool: ok and speedup >= p (NaN speedup is never fast)."""
    return rows["ok"] & (rows["speedup"].fillna(-np.inf) >= p)


def compiled_indicator(rows: pd.DataFrame) -> pd.Series:
    """Per-row bool: the candidate compiled."""
    if rows["status"].isna().all() and len(rows):
        raise ValueError("compile_rate needs a 'status' field in the records (an EvalResult status)")
    return ~rows["status"].isin(NOT_COMPILED)


def bootstrap_ci(
    values,
    clusters=None,
    *,
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean of ``values`` and its percentile-bootstrap confidence interval.

    Args:
        values: shape (n,) numbers (bools are fine); NaN not allowed.
        clusters: optional shape (n,) ids; whole clusters are resampled (e.g. problems, whose samples are
            correlated). Default: every value is its own cluster.
        n_boot: bootstrap replicates.
        confidence: interval mass, in (0, 1).
        seed: seeds the resampling.

    Returns:
        ``(mean, lo, hi)``; all NaN for empty input.
    """
    v = np.asarray(values, dtype=float).reshape(-1)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence}: must be in (0, 1), e.g. 0.95")
    if np.isnan(v).any():
        raise ValueError("bootstrap_ci got NaN values: drop or fill them first")
    if v.size == 0:
        return (float("nan"),) * 3
    codes = np.arange(v.size) if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1]
    sums = np.bincount(codes.reshape(-1), weights=v)  # shape (P,)
    counts = np.bincount(codes.reshape(-1)).astype(float)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(len(sums), np.full(len(sums), 1.0 / len(sums)), size=n_boot)  # (n_boot, P)
    boot = (draws @ sums) / (draws @ counts)
    alpha = (1.0 - confidence) / 2
    lo, hi = np.quantile(boot, [alpha, 1.0 - alpha])
    return float(v.mean()), float(lo), float(hi)


def summarize(
    records,
    ps: Sequence[float] = FAST_P_THRESHOLDS,
    turns: Sequence[int] | None = None,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Every metric per turn, last-turn and best-of-history, with problem-clustered bootstrap CIs.

    Returns:
        Tidy DataFrame: metric (namespaced, e.g. ``eval/fast@1.2/turn3``, ``eval/fast@1.2/best_turn3``),
        kind (``fast@p``, ``correct``, ``compiled``, ``hacked``), p, turn, mode (``last``/``best``),
        value, ci_lo, ci_hi, n_samples.
    """
    df = _normalise(records)
    turns = sorted(df["turn"].unique()) if turns is None else list(turns)
    rows = []
    for t in turns:
        for mode in ("last", "best"):
            sel = select_turns(df, int(t), best_of_history=mode == "best")
            tag = f"turn{int(t)}" if mode == "last" else f"best_turn{int(t)}"
            series = {f"fast@{p:g}": (fast_indicator(sel, p), p) for p in ps}
            series["correct"] = (sel["ok"], np.nan)
            if mode == "last":
                series["hacked"] = (sel["hacked"], np.nan)
                if sel["status"].notna().any():
                    series["compiled"] = (compiled_indicator(sel), np.nan)
            for kind, (ind, p) in series.items():
                value, lo, hi = bootstrap_ci(
                    ind.to_numpy(), sel["problem"].to_numpy(), n_boot=n_boot, confidence=confidence, seed=seed
                )
                rows.append(
                    dict(
                        metric=f"eval/{kind}/{tag}",
                        kind="fast@p" if kind.startswith("fast@") else kind,
                        p=p,
                        turn=int(t),
                        mode=mode,
                        value=value,
                        ci_lo=lo,
                        ci_hi=hi,
                        n_samples=len(sel),
                    )
                )
    return pd.DataFrame(rows)


def _normalise(records) -> pd.DataFrame:
    """Records as a DataFrame with typed problem/sample/turn/ok/hacked/speedup/coverage/status columns."""
    if isinstance(records, pd.DataFrame):
        df = records.copy()
    else:
        df = pd.DataFrame([_as_dict(r) for r in records])
    if len(df) and "correct" not in df:
        raise ValueError("records need a 'correct' field (correct and not hacked), see drk.metrics")
    n = len(df)
    defaults: dict[str, Any] = dict(
        problem="",
        sample=np.arange(n),
        turn=1,
        correct=False,
        hacked=False,
        speedup=np.nan,
        coverage=np.nan,
        status=None,
    )
    for col, default in defaults.items():
        if col not in df:
            df[col] = default
    df["hacked"] = df["hacked"].fillna(False).astype(bool)
    df["ok"] = df["correct"].fillna(False).astype(bool) & ~df["hacked"]
    df["correct"] = df["ok"]  # so a normalised frame normalises to itself
    df["speedup"] = pd.to_numeric(df["speedup"], errors="coerce").astype(float)
    df["coverage"] = pd.to_numeric(df["coverage"], errors="coerce").astype(float)
    df["turn"] = df["turn"].astype(int)
    if df.duplicated(["problem", "sample", "turn"]).any():
        raise ValueError("records repeat a (problem, sample, turn): each turn of a sample must appear once")
    return df[["problem", "sample", "turn", "ok", "correct", "hacked", "speedup", "coverage", "status"]]


def _fill_missing(out: pd.DataFrame, turn) -> pd.DataFrame:
    """Samples with no scored row become misses at ``turn``."""
    gap = out["ok"].isna()
    if gap.any():
        out.loc[gap, ["ok", "correct", "hacked"]] = False
        out.loc[gap, "status"] = "missing"
        out.loc[gap, "turn"] = turn if turn is not None else -1
    out["ok"] = out["ok"].astype(bool)
    out["correct"] = out["correct"].astype(bool)
    out["hacked"] = out["hacked"].astype(bool)
    out["turn"] = out["turn"].astype(int)
    return out


def _as_dict(record: Any) -> dict[str, Any]:
    """A record as a plain dict."""
    if isinstance(record, dict):
        return record
    if hasattr(record, "to_dict"):
        return record.to_dict()
    raise TypeError(
        f"records must be dicts, objects with to_dict(), or a DataFrame; got {type(record).__name__}"
    )


def _mean(series) -> float:
    """Mean of a bool/number series as a float; NaN when empty."""
    arr = np.asarray(series, dtype=float)
    return float(arr.mean()) if arr.size else float("nan")
