"""Figures of the self-inclusion bias study (paper Eq. 4), from the tidy tables of :mod:`drk.rl.bias`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from drk.figures.style import PALETTE, apply_style, method_color

_LABELS = {"grpo": "GRPO", "grpo_std": "GRPO (std)", "trloo": "TRLOO", "rloo": "RLOO"}


def plot_shrink_factor(df: pd.DataFrame, ax=None):
    """E[g_hat] / grad J vs group size N: analytic lines, Monte-Carlo points with CIs.

    Args:
        df: :func:`drk.rl.bias.shrink_factors` output (estimator, N, shrink_analytic, shrink_mc, ci_lo, ci_hi).
        ax: optional matplotlib Axes.

    Returns:
        (fig, ax).
    """
    fig, ax = _axes(ax, (4.2, 3.0))
    for i, (est, d) in enumerate(df.sort_values("N").groupby("estimator", sort=False)):
        color = method_color(est, i)
        ax.plot(d["N"], d["shrink_analytic"], color=color, lw=1.2, alpha=0.8)
        err = np.vstack([d["shrink_mc"] - d["ci_lo"], d["ci_hi"] - d["shrink_mc"]])
        ax.errorbar(
            d["N"],
            d["shrink_mc"],
            yerr=err,
            fmt="o",
            ms=3,
            color=color,
            capsize=1.5,
            label=f"{_LABELS.get(est, est)} (Monte-Carlo)",
        )
    ax.plot([], [], color="0.3", lw=1.2, label="analytic: 1 - 1/N and 1")
    ax.set_xscale("log", base=2)
    ax.set_xticks([2, 4, 8, 16, 32], labels=["2", "4", "8", "16", "32"])
    ax.set_xlabel("group size N")
    ax.set_ylabel(r"$E[\hat g] / \nabla J$")
    ax.set_title("Self-inclusion shrinks the GRPO gradient")
    ax.legend(loc="lower right")
    return fig, ax


def plot_per_turn_shrink(df: pd.DataFrame, ax=None, estimator: str = "grpo"):
    """Per-turn effective shrink of ``estimator`` when groups thin out by early termination.

    Args:
        df: :func:`drk.rl.bias.per_turn_shrink` output (estimator, K, stop_prob, turn, shrink_analytic,
            shrink_mc, ci_lo, ci_hi).
        ax: optional matplotlib Axes.
        estimator: which estimator's rows to draw.

    Returns:
        (fig, ax).
    """
    fig, ax = _axes(ax, (4.2, 3.0))
    d = df[df["estimator"] == estimator]
    markers = ["o", "s", "^", "D", "v"]
    for i, ((k, q), g) in enumerate(d.sort_values("turn").groupby(["K", "stop_prob"])):
        color = PALETTE[i % len(PALETTE)]
        ax.plot(g["turn"], g["shrink_analytic"], color=color, lw=1.2)
        err = np.vstack([g["shrink_mc"] - g["ci_lo"], g["ci_hi"] - g["shrink_mc"]])
        ax.errorbar(
            g["turn"],
            g["shrink_mc"],
            yerr=err,
            fmt=markers[i % len(markers)],
            ms=3.5,
            color=color,
            capsize=1.5,
            label=f"K={k}, stop={q:g}",
        )
    ax.set_xticks(sorted(d["turn"].unique()))
    ax.set_xlabel("turn t")
    ax.set_ylabel(r"$E[\hat g_t] / \nabla_t J$")
    ax.set_title(f"{_LABELS.get(estimator, estimator)}: shrink per turn (line: analytic)")
    ax.legend(ncol=2)
    return fig, ax


def plot_bandit_curves(df: pd.DataFrame, ax=None, optimum: float | None = None):
    """Learning curves of the toy multi-turn bandit: mean and CI band per estimator.

    Args:
        df: :func:`drk.rl.bias.summarize_curves` output (estimator, step, mean, ci_lo, ci_hi, value).
        ax: optional matplotlib Axes.
        optimum: draw the always-good policy's expected reward as a dashed line.

    Returns:
        (fig, ax).
    """
    fig, ax = _axes(ax, (4.2, 3.0))
    for i, (est, d) in enumerate(df.sort_values("step").groupby("estimator", sort=False)):
        color = method_color(est, i)
        ax.plot(d["step"], d["mean"], color=color, lw=1.3, label=_LABELS.get(est, est))
        ax.fill_between(d["step"], d["ci_lo"], d["ci_hi"], color=color, alpha=0.25, lw=0)
    if optimum is not None:
        ax.axhline(optimum, color="0.4", ls="--", lw=0.9, label=f"optimum {optimum:.3f}")
    value = df["value"].iloc[0] if "value" in df and len(df) else "reward"
    ax.set_xlabel("step")
    ax.set_ylabel("expected episode reward" if value == "expected_reward" else "episode reward")
    ax.set_title("Toy multi-turn bandit: GRPO vs TRLOO")
    ax.legend(loc="lower right")
    return fig, ax


def _axes(ax, size):
    """The given Axes and its figure, or a new styled pair."""
    if ax is not None:
        return ax.figure, ax
    apply_style()
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size)
    return fig, ax
