"""Figure 1: Fast@1.2 of five systems on KernelBench levels 1-3 (data: Table 1)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from drk.figures._util import new_axes, percent_axis
from drk.figures.style import PALETTE

#: The five systems of Figure 1, named as in ``table1_fast_p_eager.csv``.
FIG1_MODELS: tuple[str, ...] = ("AutoTriton-8B", "GPT-5", "Claude-4.5-Sonnet", "Dr.Kernel-8B", "Dr.Kernel-14B")


def plot_fast_p_bars(df: pd.DataFrame, ax=None, *, p: float = 1.2, models: Sequence[str] = FIG1_MODELS):
    """Grouped bars of Fast@p per level (groups) and model (bars).

    Args:
        df: long Fast@p table, columns ``model, level, p, fast_p`` (fraction), e.g. ``load_fast_p().frame``.
        ax: axes to draw into; a new figure when ``None``.
        p: the speedup threshold to show.
        models: which models, in bar order; models absent from ``df`` are skipped.

    Returns:
        ``(fig, ax)``; one bar per (level, model) present, labelled with its value in percent.
    """
    fig, ax = new_axes(ax, figsize=(6.0, 3.0))
    sub = df[np.isclose(df["p"].astype(float), p)]
    models = [m for m in models if m in set(sub["model"])]
    levels = sorted(sub["level"].unique())
    width = 0.8 / max(len(models), 1)
    for i, model in enumerate(models):
        values = sub[sub["model"] == model].set_index("level")["fast_p"].reindex(levels)
        x = np.arange(len(levels)) + (i - (len(models) - 1) / 2) * width
        bars = ax.bar(x, values.to_numpy(float), width, label=model, color=PALETTE[i % len(PALETTE)])
        ax.bar_label(bars, labels=[f"{100 * v:.1f}" for v in values], fontsize=6, padding=1)
    ax.set_xticks(np.arange(len(levels)), [f"Level {level}" for level in levels])
    ax.set_ylabel(f"Fast@{p:g} (%)")
    percent_axis(ax)
    ax.margins(y=0.12)
    ax.legend(ncols=min(len(models), 5), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    return fig, ax
