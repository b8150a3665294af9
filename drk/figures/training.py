"""Training-run figures (4, 5/7, 9) from one tidy training log.

Training-log schema (one row per logged scalar; JSONL or Parquet on disk, a ``DataFrame`` here):

=========  =======  ==========================================================================
column     type     meaning
=========  =======  ==========================================================================
step       int      RL step (optimizer update) the value was logged at
method     str      ablation label, e.g. ``trloo``, ``grpo``, ``single_turn``, ``gamma0``, ``mrs``
metric     str      namespaced name, e.g. ``gym/fast@1.2/turn3``, ``entropy`` (see below)
value      float    raw value; rates (Fast@p, hacking ratio, profiling ratio) are fractions in [0, 1]
run        str      optional: run id; several runs of one method are averaged, min-max shaded
=========  =======  ==========================================================================

Metric names the figures read by default are those ``drk.train`` logs (``drk.train.logs.METRICS`` and TRL's):
``gym/fast@{p}/turn{t}`` (Fast@p of the training rollouts at turn t, p written as ``1``, ``1.2``, ...),
``entropy``, ``grad_norm``, ``rollout/ppl_train``, ``rollout/ppl_rollout``, ``gym/hacking_ratio``,
``gym/profiling_ratio``. Held-out evaluations logged as ``eval/fast@{p}/turn{t}`` are preferred for the Fast@p
figures when present. The trainer writes one wide JSONL row per step (``<run>/log.jsonl``):
:func:`tidy_training_log` turns it into this schema.
A metric missing from the log leaves its panel empty with a "not logged" note instead of failing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from drk.figures._util import new_axes, new_axes_row, note_missing, percent_axis
from drk.figures.style import method_color

#: Columns every training log has; ``run`` is optional.
LOG_COLUMNS: tuple[str, ...] = ("step", "method", "metric", "value")


class Panel(NamedTuple):
    """One panel of a multi-panel figure: which metric, its axis label, and whether it is a rate."""

    metric: str
    label: str
    percent: bool = False


def fast_p_metric(p: float, turn: int, prefix: str = "gym") -> str:
    """Name of a Fast@p-at-turn metric, e.g. ``gym/fast@1.2/turn3`` (training rollouts) or ``eval/...``."""
    return f"{prefix}/fast@{p:g}/turn{turn}"


def fast_p_prefix(log: pd.DataFrame) -> str:
    """``"eval"`` when the log holds held-out Fast@p metrics, else ``"gym"`` (the training rollouts')."""
    return "eval" if log["metric"].astype(str).str.startswith("eval/fast@").any() else "gym"


def tidy_training_log(rows, *, method: str, run: str | None = None) -> pd.DataFrame:
    """A trainer log (one wide dict per step, e.g. ``drk.train``'s ``log.jsonl`` rows) in this module's schema.

    Args:
        rows: a list of dicts or a DataFrame with a ``step`` column and one column per metric.
        method: the ablation label of the run.
        run: the run id (default: ``method``).

    Returns:
        Columns ``step, method, run, metric, value``; non-numeric and missing values are dropped.
    """
    wide = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    long = wide.melt(id_vars=["step"], var_name="metric", value_name="value")
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    long = long.dropna(subset=["value"]).assign(method=method, run=run or method)
    return long[["step", "method", "run", "metric", "value"]].reset_index(drop=True)


#: Figures 5 and 7: Fast@1.2 and the training-health signals.
DYNAMICS_PANELS: tuple[Panel, ...] = (
    Panel(fast_p_metric(1.2, 3), "Fast@1.2, turn 3 (%)", True),
    Panel("entropy", "entropy"),
    Panel("grad_norm", "grad norm"),
    Panel("rollout/ppl_train", "perplexity (trainer)"),
    Panel("rollout/ppl_rollout", "perplexity (rollout)"),
)

#: Figure 9: PRS soft vs hard vs none.
PRS_PANELS: tuple[Panel, ...] = (
    Panel(fast_p_metric(1.2, 3), "Fast@1.2, turn 3 (%)", True),
    Panel("gym/profiling_ratio", "profiling ratio (%)", True),
)
PRS_METHODS: tuple[str, ...] = ("prs_soft", "prs_hard", "pr")  # pr: the PR reward without PRS ("no PRS")
#: The methods each figure compares in the paper (the mini runs log them all in one folder).
FIG4_METHODS: tuple[str, ...] = ("trloo", "grpo", "single_turn", "gamma0", "no_hack_check")
DYNAMICS_METHODS: tuple[str, ...] = ("trloo", "mrs", "pr", "prs_soft")


def methods_for(log: pd.DataFrame, preferred: Sequence[str]) -> list[str] | None:
    """The ``preferred`` methods present in ``log``, or None (= all) when the log has none of them."""
    present = [m for m in preferred if m in set(log["method"])]
    return present or None


def fast_p_turns(log: pd.DataFrame, p: float, prefix: str) -> pd.Series:
    """For each row, the turn ``t`` of its ``{prefix}/fast@{p}/turn{t}`` metric; NaN for every other metric."""
    pattern = rf"^{re.escape(prefix)}/fast@{re.escape(f'{p:g}')}/turn(\d+)$"
    return pd.to_numeric(log["metric"].astype(str).str.extract(pattern, expand=False))


def resolve_turn_metric(log: pd.DataFrame, metric: str) -> str:
    """``metric`` if logged; for a missing ``.../fast@p/turnT``, the same metric at the last turn that was logged.

    Runs with fewer turns than the paper's three (the mini runs use two) still fill the Fast@p panels.
    """
    match = re.match(r"^(.*/fast@[^/]+/turn)(\d+)$", metric)
    if match is None or (log["metric"] == metric).any():
        return metric
    turns = log["metric"].astype(str).str.extract(rf"^{re.escape(match.group(1))}(\d+)$", expand=False).dropna()
    return f"{match.group(1)}{int(turns.astype(int).max())}" if len(turns) else metric


def validate_training_log(log: pd.DataFrame) -> None:
    """Raise ``ValueError`` naming the missing columns when ``log`` does not follow the schema above."""
    missing = [c for c in LOG_COLUMNS if c not in log.columns]
    if missing:
        raise ValueError(f"training log lacks columns {missing}; expected {list(LOG_COLUMNS)} (+ optional 'run')")


def _methods(log: pd.DataFrame, methods: Sequence[str] | None) -> list[str]:
    present = list(dict.fromkeys(log["method"]))
    return present if methods is None else [m for m in methods if m in present]


def plot_metric_vs_step(log: pd.DataFrame, metric: str, ax=None, *, methods: Sequence[str] | None = None,
                        percent: bool = False, ylabel: str | None = None):
    """One line per method: ``metric`` vs step (mean over runs, min-max band when there are several).

    Returns:
        ``(fig, ax)``; an absent metric gives an empty axes with a "not logged" note.
    """
    validate_training_log(log)
    fig, ax = new_axes(ax)
    sub = log[log["metric"] == metric]
    if sub.empty:
        note_missing(ax, metric)
    for i, method in enumerate(_methods(sub, methods)):
        stats = sub[sub["method"] == method].groupby("step")["value"].agg(["mean", "min", "max", "count"])
        color = method_color(method, i)
        ax.plot(stats.index, stats["mean"], label=method, color=color)
        if stats["count"].max() > 1:
            ax.fill_between(stats.index, stats["min"], stats["max"], color=color, alpha=0.2, linewidth=0)
    ax.set_xlabel("RL step")
    ax.set_ylabel(ylabel or metric)
    if percent:
        percent_axis(ax)
    if ax.get_lines():
        ax.legend(frameon=False)
    return fig, ax


def plot_fast_p_vs_step(log: pd.DataFrame, ax=None, *, p: float = 1.0, turn: int | None = None,
                        methods: Sequence[str] | None = None, prefix: str | None = None):
    """Figure 4 (left): Fast@p at ``turn`` vs RL step, one line per method.

    ``turn`` defaults to the last turn logged (3 in the paper's runs). A method that never reached ``turn`` (a
    single-turn run) is drawn at its own last turn, labelled ``method (turn k)``. ``prefix`` picks ``eval/``
    (held out) or ``gym/`` (training rollouts); default :func:`fast_p_prefix`.
    """
    validate_training_log(log)
    prefix = prefix or fast_p_prefix(log)
    turns = fast_p_turns(log, p, prefix)
    logged = log.assign(turn=turns)[turns.notna()].astype({"turn": int})
    if turn is None:
        turn = int(logged["turn"].max()) if len(logged) else 3
    last = logged.groupby("method")["turn"].max()
    short = [m for m in _methods(logged, methods) if last[m] < turn]
    fig, ax = plot_metric_vs_step(log, fast_p_metric(p, turn, prefix), ax, methods=methods, percent=True,
                                  ylabel=f"Fast@{p:g}, turn {turn} (%)")
    for i, method in enumerate(short):
        sub = logged[(logged["method"] == method) & (logged["turn"] == last[method])]
        stats = sub.groupby("step")["value"].mean()
        ax.plot(stats.index, stats.to_numpy(), linestyle="--", color=method_color(method, i + 10),
                label=f"{method} (turn {last[method]})")
    if short:
        ax.legend(frameon=False)
    return fig, ax


def plot_fast_p_vs_turn(log: pd.DataFrame, ax=None, *, p: float = 1.0, step: int | None = None,
                        methods: Sequence[str] | None = None, prefix: str | None = None):
    """Figure 4 (right): Fast@p vs turn at one step (default: each method's last logged step)."""
    validate_training_log(log)
    fig, ax = new_axes(ax)
    prefix = prefix or fast_p_prefix(log)
    turns = fast_p_turns(log, p, prefix)
    sub = log[turns.notna()].assign(turn=turns.dropna().astype(int))
    if sub.empty:
        note_missing(ax, f"{prefix}/fast@{p:g}/turn*")
    for i, method in enumerate(_methods(sub, methods)):
        rows = sub[sub["method"] == method]
        at = rows[rows["step"] == (rows["step"].max() if step is None else step)]
        curve = at.groupby("turn")["value"].mean()
        if len(curve):
            ax.plot(curve.index, curve.to_numpy(), marker="o", label=method, color=method_color(method, i))
    ax.set_xlabel("turn")
    ax.set_ylabel(f"Fast@{p:g} (%)")
    percent_axis(ax)
    ax.xaxis.get_major_locator().set_params(integer=True)
    if ax.get_lines():
        ax.legend(frameon=False)
    return fig, ax


def plot_training_panels(log: pd.DataFrame, axes=None, *, panels: Sequence[Panel] = DYNAMICS_PANELS,
                         methods: Sequence[str] | None = None):
    """Figures 5 and 7: one panel per metric vs step, one line per method in each.

    Returns:
        ``(fig, axes)`` with ``len(panels)`` axes; the legend is drawn in the first panel with data.
    """
    fig, axes = new_axes_row(axes, n=len(panels))
    for ax, panel in zip(axes, panels, strict=True):
        metric = resolve_turn_metric(log, panel.metric)
        turn = metric.rsplit("turn", 1)[-1]
        label = panel.label if metric == panel.metric else re.sub(r"turn \d+", f"turn {turn}", panel.label)
        plot_metric_vs_step(log, metric, ax, methods=methods, percent=panel.percent, ylabel=label)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    with_data = [ax for ax in axes if ax.get_lines()]
    if with_data:
        with_data[0].legend(frameon=False)
    return fig, np.asarray(axes)


def plot_prs_ablation(log: pd.DataFrame, axes=None, *, methods: Sequence[str] = PRS_METHODS,
                      panels: Sequence[Panel] = PRS_PANELS):
    """Figure 9: soft PRS, hard PRS and no PRS: Fast@1.2 and profiling ratio vs step."""
    return plot_training_panels(log, axes, panels=panels, methods=methods)
