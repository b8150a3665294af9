"""Small helpers shared by the plot modules (axes creation, percent axes, empty-panel notes)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from drk.figures.style import apply_style


def new_axes(ax=None, figsize: tuple[float, float] = (4.0, 3.0)):
    """Return ``(fig, ax)``: ``ax``'s figure, or a fresh styled figure with one axes."""
    import matplotlib.pyplot as plt

    if ax is not None:
        return ax.figure, ax
    apply_style()
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return fig, ax


def new_axes_row(axes=None, n: int = 2, panel_size: tuple[float, float] = (3.2, 2.8)):
    """Return ``(fig, axes)`` with ``n`` axes side by side, or the ``n`` axes given."""
    import matplotlib.pyplot as plt

    if axes is not None:
        axes = np.atleast_1d(np.asarray(axes, dtype=object)).ravel()
        if len(axes) < n:
            raise ValueError(f"need {n} axes for this figure, got {len(axes)}")
        return axes[0].figure, axes[:n]
    apply_style()
    fig, axes = plt.subplots(1, n, figsize=(panel_size[0] * n, panel_size[1]), squeeze=False,
                             layout="constrained")
    return fig, axes[0]


def percent_axis(ax, axis: str = "y") -> None:
    """Show a fraction axis as percent (data stays fractions)."""
    from matplotlib.ticker import PercentFormatter

    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))


def note_missing(ax, what: str | Sequence[str]) -> None:
    """Write a 'not logged' note in an empty panel, so a missing metric is visible rather than silent."""
    names = [what] if isinstance(what, str) else list(what)
    ax.text(0.5, 0.5, "not logged:\n" + "\n".join(names), ha="center", va="center",
            transform=ax.transAxes, fontsize=8, color="0.4")
