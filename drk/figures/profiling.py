"""Figure 2 (right) / Figure 10: profiling ratio and speedup of decoy, lazy and fused candidates."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter
from matplotlib.transforms import blended_transform_factory

from drk.figures._util import new_axes_row
from drk.figures.style import PALETTE

_SOURCE_COLORS = {"paper": PALETTE[0], "ours": PALETTE[1]}


def plot_profiling_examples(df: pd.DataFrame, ax=None):
    """Bars of profiling ratio (left panel) and speedup (right panel) per case, paper beside ours.

    Args:
        df: columns ``case, speedup, coverage`` (PR as a fraction) and optionally ``source``; e.g.
            ``load_fig10_examples().frame`` concatenated with our environment's measurements. A missing value
            (``speedup`` is ``None`` on CPU) draws no bar and is marked "n/a", or with the candidate's
            ``status`` column when it failed (e.g. "hacked").
        ax: two axes to draw into; a new 1x2 figure when ``None``.

    Returns:
        ``(fig, axes)``; one bar per (case, source) with a value in each panel.
    """
    fig, axes = new_axes_row(ax, n=2)
    df = df.assign(source=df["source"] if "source" in df else "paper")
    cases = list(dict.fromkeys(df["case"]))
    sources = list(dict.fromkeys(df["source"]))
    width = 0.8 / len(sources)
    panels = (("coverage", "profiling ratio (%)", lambda v: f"{100 * v:.3g}%"),
              ("speedup", "speedup (x)", lambda v: f"{v:.2f}x"))
    colors = {s: _SOURCE_COLORS.get(s, PALETTE[(j + 2) % len(PALETTE)]) for j, s in enumerate(sources)}
    for axis, (column, label, fmt) in zip(axes, panels, strict=True):
        for j, source in enumerate(sources):
            rows = df[df["source"] == source].set_index("case").reindex(cases)
            values = pd.to_numeric(rows[column], errors="coerce")
            x = np.arange(len(cases)) + (j - (len(sources) - 1) / 2) * width
            # a share of 0 (a decoy's kernel never ran) has no bar on the log axis: labelled instead
            keep = (values.notna() & (values > 0 if column == "coverage" else True)).to_numpy()
            bars = axis.bar(x[keep], values[keep].to_numpy(float), width, color=colors[source])
            axis.bar_label(bars, labels=[fmt(v) + _status_note(rows, c) for c, v in values[keep].items()],
                           fontsize=6, padding=1)
            at_bottom = blended_transform_factory(axis.transData, axis.transAxes)  # y = 0 has no place on a log axis
            for xi, case in zip(x[~keep], values.index[~keep], strict=True):
                axis.text(xi, 0.01, _missing_label(rows, case), ha="center", va="bottom", fontsize=6, color="0.4",
                          transform=at_bottom)
        axis.set_xticks(np.arange(len(cases)), [c.replace("_", "\n") for c in cases])
        axis.set_ylabel(label)
        axis.set_xlim(-0.5, len(cases) - 0.5)
        axis.margins(y=0.15)
    axes[0].set_yscale("log")  # a lazy candidate's share is 1e-4..1e-2 of the GPU time: invisible on a linear axis
    axes[0].set_ylim(top=3.0)
    axes[0].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:g}%"))
    axes[1].axhline(1.0, color="0.5", linewidth=0.8, linestyle=":")
    top = pd.to_numeric(df["speedup"], errors="coerce").max()
    if top == top:  # headroom for the legend above the tallest bar
        axes[1].set_ylim(0, 1.45 * top)
    axes[1].legend(handles=[Patch(color=c, label=s) for s, c in colors.items()], frameon=False, loc="upper left",
                   fontsize=6)
    return fig, axes


def _status_note(rows: pd.DataFrame, case: str) -> str:
    """A second label line naming a candidate's status unless it is correct: a hacked candidate's measured speedup
    says so."""
    status = rows["status"].get(case) if "status" in rows else None
    return "" if status is None or pd.isna(status) or status == "correct" else f"\n{status}"


def _missing_label(rows: pd.DataFrame, case: str) -> str:
    """Text for a missing bar: the candidate's status when it failed (e.g. "hacked"), "0%" for a measured share of
    zero, else "n/a"."""
    status = rows["status"].get(case) if "status" in rows else None
    if isinstance(status, str) and status != "correct":
        return status
    coverage = pd.to_numeric(pd.Series([rows["coverage"].get(case)]), errors="coerce").iloc[0]
    return "0%" if coverage == 0 else "n/a"
