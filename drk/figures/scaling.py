"""Figure 6: sequential test-time scaling, last-turn and best-of-history Fast@1.2 vs turn."""

from __future__ import annotations

import pandas as pd

from drk.figures._util import new_axes, percent_axis
from drk.figures.style import method_color

_AGGREGATION_STYLES = {"last_turn": "-", "best_of_history": "--"}
_AGGREGATION_LABELS = {"last_turn": "last turn", "best_of_history": "best of history"}
_CONTEXT_LABELS = {"vanilla": "vanilla", "best_w": "context management"}


def plot_stts(df: pd.DataFrame, ax=None, *, p: float = 1.2, kind: str = "fast@p"):
    """Score vs turn for each context strategy: last turn (solid) and best of history (dashed).

    Args:
        df: columns ``turn, context`` (``vanilla`` / ``best_w``), ``aggregation`` (``last_turn`` /
            ``best_of_history``), ``value`` (fraction); optionally ``ci_lo, ci_hi`` (shaded), and ``kind``/``p``
            (rows of another kind or p are ignored). ``drk.eval.summary.stts_curves`` writes this.
        ax: axes to draw into; a new figure when ``None``.
        p, kind: which score to draw: Fast@``p`` (``"fast@p"``) or the correct rate (``"correct"``).

    Returns:
        ``(fig, ax)``; one line per (context, aggregation).
    """
    fig, ax = new_axes(ax, figsize=(4.5, 3.0))
    if "kind" in df:
        df = df[df["kind"] == kind]
    if "p" in df and kind == "fast@p":
        df = df[(df["p"].astype(float) - p).abs() < 1e-9]
    for i, (context, by_context) in enumerate(df.groupby("context", sort=False)):
        color = method_color(str(context), i)
        for aggregation, rows in by_context.groupby("aggregation", sort=False):
            rows = rows.sort_values("turn")
            ax.plot(rows["turn"], rows["value"], color=color, marker="o", markersize=3,
                    linestyle=_AGGREGATION_STYLES.get(aggregation, ":"),
                    label=f"{_CONTEXT_LABELS.get(context, context)}, "
                          f"{_AGGREGATION_LABELS.get(aggregation, aggregation)}")
            if {"ci_lo", "ci_hi"} <= set(rows.columns) and rows["ci_lo"].notna().any():
                ax.fill_between(rows["turn"], rows["ci_lo"], rows["ci_hi"], color=color, alpha=0.12, linewidth=0)
    ax.set_xlabel("turn")
    ax.set_ylabel(f"Fast@{p:g} (%)" if kind == "fast@p" else "correct (%)")
    percent_axis(ax)
    ax.xaxis.get_major_locator().set_params(integer=True)
    if ax.get_lines():
        ax.legend(frameon=False)
    return fig, ax
