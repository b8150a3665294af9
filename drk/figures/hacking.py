"""Hacking figures: Figure 2 (left), Fast@p with vs without the hacking check; Figure 8, hacking ratio vs step."""

from __future__ import annotations

import pandas as pd

from drk.figures._util import new_axes, percent_axis
from drk.figures.style import PALETTE
from drk.figures.training import fast_p_metric, fast_p_prefix, fast_p_turns, plot_metric_vs_step

#: Colour per (p, hacking_check) series of Figure 2 (left).
_SERIES_COLORS = {(1.0, True): PALETTE[0], (1.0, False): PALETTE[1], (1.2, True): PALETTE[2], (1.2, False): PALETTE[4]}
_SOURCE_STYLES = {"paper": "-", "ours": "--"}


def plot_hacking_check_curves(df: pd.DataFrame, ax=None):
    """Figure 2 (left): Fast@p vs RL step, training with and without the hacking check.

    Args:
        df: columns ``step, p, hacking_check (bool), value`` (fraction) and optionally ``source``
            (``"paper"`` solid, ``"ours"`` dashed), e.g. ``load_fig2_curves().frame`` with our run appended.
        ax: axes to draw into; a new figure when ``None``.

    Returns:
        ``(fig, ax)``; one line per (source, p, hacking_check) present.
    """
    several = "source" in df and df["source"].nunique() > 1
    fig, ax = new_axes(ax, figsize=(7.5, 3.0) if several else (4.5, 3.0))  # room for the legend beside
    df = df.assign(source=df["source"] if "source" in df else "paper")
    for (source, p, check), rows in df.groupby(["source", "p", "hacking_check"], sort=False):
        rows = rows.sort_values("step")
        label = f"Fast@{p:g}, {'with' if check else 'without'} hacking check" + (
            f" ({source})" if df["source"].nunique() > 1 else "")
        ax.plot(rows["step"], rows["value"], label=label, linestyle=_SOURCE_STYLES.get(source, ":"),
                color=_SERIES_COLORS.get((float(p), bool(check)), PALETTE[7]))
    ax.set_xlabel("RL step")
    ax.set_ylabel("Fast@p (%)")
    percent_axis(ax)
    if several:
        ax.legend(frameon=False, loc="center left", bbox_to_anchor=(1.02, 0.5))  # beside: the curves fill the axes
    else:
        ax.legend(frameon=False)
    return fig, ax


def plot_hacking_ratio(log: pd.DataFrame, ax=None, *, metric: str = "gym/hacking_ratio", methods=None):
    """Figure 8: share of rollouts flagged by the hacking checks vs RL step, one line per method.

    Args:
        log: a training log (schema in :mod:`drk.figures.training`).
    """
    return plot_metric_vs_step(log, metric, ax, methods=methods, percent=True, ylabel="hacking ratio (%)")


def fig2_from_training_log(log: pd.DataFrame, *, with_check: str = "trloo", without_check: str = "no_hack_check",
                           turn: int | None = None, source: str = "ours") -> pd.DataFrame:
    """Our runs in Figure 2 (left)'s layout: Fast@1 and Fast@1.2 at ``turn`` of the two methods (held-out
    ``eval/`` metrics when logged, else the training rollouts' ``gym/``).

    Args:
        log: a training log (schema in :mod:`drk.figures.training`).
        with_check, without_check: the method labels of the runs trained with and without the hacking check.
        turn: the turn whose Fast@p is drawn; default the last one logged (3 in the paper, 2 in the mini runs).

    Returns:
        Columns ``step, p, hacking_check, value, source``; empty when neither method logged the metrics.
    """
    parts, prefix = [], fast_p_prefix(log)
    if turn is None:
        logged = fast_p_turns(log, 1.0, prefix)
        turn = int(logged.max()) if logged.notna().any() else 3
    for method, check in ((with_check, True), (without_check, False)):
        for p in (1.0, 1.2):
            rows = log[(log["method"] == method) & (log["metric"] == fast_p_metric(p, turn, prefix))]
            mean = rows.groupby("step", as_index=False)["value"].mean()
            parts.append(mean.assign(p=p, hacking_check=check, source=source))
    out = pd.concat(parts, ignore_index=True)
    return out[["step", "p", "hacking_check", "value", "source"]]
