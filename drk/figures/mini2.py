"""mini2's training and evaluation figures, mean over seeds with a 95 % t-band (issue 12, item 8).

Each function takes the tidy tables of :mod:`drk.mini2.runs` and neither loads nor saves:

- ``log``: :func:`drk.mini2.runs.load_training` (``variant, seed, step, metric, value``; held-out points as
  ``heldout/<metric>``, e.g. ``heldout/fast@1.2/turn3``);
- ``stts``: :func:`drk.mini2.runs.load_stts` (``seed, context, turn, mode, p, value``).

A line is the mean over seeds at each step (or turn), its band the 95 % Student-t interval of that mean (n - 1
degrees of freedom, as PLAN.md's per-variant intervals); a variant with one seed gets a line and no band.

Which paper figure each function answers (numbering of ``figures/README.md``):

=======================  =====================================================================  =================
function                 panels                                                                 paper
=======================  =====================================================================  =================
plot_estimators          training reward and held-out Fast@1.2 vs step: TRLOO, GRPO, rescaled   Fig 4 (left)
plot_hacking_check       hack evidence in training, held-out turn-1 hacking ratio, Fast@1/1.2   Fig 2 left, Fig 8
plot_turns               held-out Fast@1.2 vs step and vs turn: multi vs single turn, gamma     Fig 4
plot_mrs                 Fast@1.2, reward, MRS-masked share, grad norm: MRS under mismatches    Fig 5/7
plot_prs                 held-out Fast@1.2 and mean PR of correct answers: PR, PRS soft/hard    Fig 9 (and 5/7)
plot_stts_seeds          best-of-history Fast@1.2 vs turn (1-8): vanilla vs best-w (w = 4)      Fig 6
=======================  =====================================================================  =================
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from drk.figures._util import new_axes, new_axes_row, note_missing, percent_axis
from drk.figures.style import method_color
from drk.figures.training import Panel

ESTIMATOR_VARIANTS: tuple[str, ...] = ("trloo", "grpo", "grpo_rescaled")
HACKING_VARIANTS: tuple[str, ...] = ("trloo", "no_hack_check")
TURN_VARIANTS: tuple[str, ...] = ("trloo", "single_turn", "gamma0")
MRS_VARIANTS: tuple[str, ...] = ("trloo", "mrs", "mrs_bf16", "no_mrs_bf16", "mrs_stale")
PRS_VARIANTS: tuple[str, ...] = ("trloo", "pr", "prs_soft", "prs_hard")


def seed_bands(frame: pd.DataFrame, x: str) -> pd.DataFrame:
    """Per value of ``x``: ``mean`` over seeds, ``lo``/``hi`` of its 95 % t-interval (NaN with one seed), ``n``."""
    from drk.mini2.stats import t_interval

    rows = []
    for value, group in frame.groupby(x, sort=True):
        iv = t_interval(group.groupby("seed")["value"].mean().to_numpy())
        rows.append({x: value, "mean": iv.mean, "lo": iv.lo, "hi": iv.hi, "n": iv.n})
    return pd.DataFrame(rows, columns=[x, "mean", "lo", "hi", "n"])


def _draw(ax, bands: pd.DataFrame, x: str, label: str, color: str, **style) -> None:
    ax.plot(bands[x], bands["mean"], label=label, color=color, **style)
    if bands["lo"].notna().any():
        ax.fill_between(bands[x], bands["lo"], bands["hi"], color=color, alpha=0.2, linewidth=0)


def _variants(frame: pd.DataFrame, variants: Sequence[str] | None) -> list[str]:
    present = list(dict.fromkeys(frame["variant"]))
    return present if variants is None else [v for v in variants if v in present]


def last_turn(log: pd.DataFrame) -> int:
    """The last held-out turn logged (3 in PLAN.md's runs; 3 when nothing is logged)."""
    turns = log["metric"].astype(str).str.extract(r"^heldout/fast@[\d.]+/turn(\d+)$", expand=False).dropna()
    return int(turns.astype(int).max()) if len(turns) else 3


def plot_seed_bands(log: pd.DataFrame, metric: str, ax=None, *, variants: Sequence[str] | None = None,
                    percent: bool = False, ylabel: str | None = None):
    """One line (mean over seeds) and band (95 % t) per variant: ``metric`` vs RL step.

    Returns:
        ``(fig, ax)``; a metric nobody logged leaves a "not logged" note.
    """
    fig, ax = new_axes(ax)
    sub = log[log["metric"] == metric]
    if sub.empty:
        note_missing(ax, metric)
    for i, variant in enumerate(_variants(sub, variants)):
        _draw(ax, seed_bands(sub[sub["variant"] == variant], "step"), "step", variant, method_color(variant, i))
    ax.set_xlabel("RL step")
    ax.set_ylabel(ylabel or metric)
    if percent:
        percent_axis(ax)
    if ax.get_lines():
        ax.legend(frameon=False)
    return fig, ax


def plot_panels(log: pd.DataFrame, panels: Sequence[Panel], axes=None, *, variants: Sequence[str] | None = None):
    """One :func:`plot_seed_bands` panel per metric; the legend once, in the first panel with data."""
    fig, axes = new_axes_row(axes, n=len(panels))
    for ax, panel in zip(axes, panels, strict=True):
        plot_seed_bands(log, panel.metric, ax, variants=variants, percent=panel.percent, ylabel=panel.label)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    with_data = [ax for ax in axes if ax.get_lines()]
    if with_data:
        with_data[0].legend(frameon=False)
    return fig, np.asarray(axes)


def _fast(log: pd.DataFrame, p: float = 1.2) -> Panel:
    t = last_turn(log)
    return Panel(f"heldout/fast@{p:g}/turn{t}", f"held-out Fast@{p:g}, turn {t} (%)", True)


def plot_estimators(log: pd.DataFrame, axes=None, *, variants: Sequence[str] = ESTIMATOR_VARIANTS):
    """TRLOO vs GRPO (and GRPO rescaled by N/(N-1)): training reward and held-out Fast@1.2 vs step."""
    panels = (Panel("rl/reward_mean", "training reward"), _fast(log))
    return plot_panels(log, panels, axes, variants=variants)


def plot_hacking_check(log: pd.DataFrame, axes=None, *, variants: Sequence[str] = HACKING_VARIANTS):
    """With vs without the hacking check: the share of training turns with hack evidence (hacks the run rewarded
    when the check is off), the held-out turn-1 hacking ratio, and held-out Fast@1 and Fast@1.2 vs step."""
    panels = (Panel("mini2/hack_evidence_rate", "training turns hacked (%)", True),
              Panel("heldout/hacked/turn1", "held-out hacking ratio, turn 1 (%)", True), _fast(log, 1.0), _fast(log))
    return plot_panels(log, panels, axes, variants=variants)


def plot_turns(log: pd.DataFrame, axes=None, *, variants: Sequence[str] = TURN_VARIANTS, p: float = 1.2):
    """Multi- vs single-turn training and gamma: held-out Fast@p at the last turn vs step (left) and per turn,
    averaged over the evaluation points in the last 20 % of steps (right)."""
    from drk.mini2.endpoints import window_start

    fig, axes = new_axes_row(axes, n=2)
    plot_seed_bands(log, _fast(log, p).metric, axes[0], variants=variants, percent=True,
                    ylabel=_fast(log, p).label)
    pattern = rf"^heldout/fast@{re.escape(f'{p:g}')}/turn(\d+)$"
    turns = pd.to_numeric(log["metric"].astype(str).str.extract(pattern, expand=False))
    rows = log.assign(turn=turns)[turns.notna()]
    if rows.empty:
        note_missing(axes[1], f"heldout/fast@{p:g}/turn*")
    for i, variant in enumerate(_variants(rows, variants)):
        sub = rows[rows["variant"] == variant]
        last = sub.groupby("seed")["step"].transform("max")  # each run's last step = its number of steps
        window = sub[sub["step"] > last.map(window_start)]
        per_seed = window.groupby(["seed", "turn"], as_index=False)["value"].mean()
        _draw(axes[1], seed_bands(per_seed, "turn"), "turn", variant, method_color(variant, i), marker="o")
    axes[1].set_xlabel("turn")
    axes[1].set_ylabel(f"held-out Fast@{p:g}, last 20 % of steps (%)")
    percent_axis(axes[1])
    axes[1].xaxis.get_major_locator().set_params(integer=True)
    if axes[1].get_lines():
        axes[1].legend(frameon=False)
    return fig, axes


def plot_mrs(log: pd.DataFrame, axes=None, *, variants: Sequence[str] = MRS_VARIANTS):
    """MRS under a rollout/trainer mismatch (bf16 or stale rollouts) and without one: held-out Fast@1.2, training
    reward, the share of samples outside the MRS window (logged with MRS off too: what it would mask) and the
    gradient norm vs step."""
    panels = (_fast(log), Panel("rl/reward_mean", "training reward"),
              Panel("rl/mrs_masked_frac", "outside the MRS window (%)", True), Panel("grad_norm", "grad norm"))
    return plot_panels(log, panels, axes, variants=variants)


def plot_prs(log: pd.DataFrame, axes=None, *, variants: Sequence[str] = PRS_VARIANTS):
    """The PR reward and PRS (soft, hard): held-out Fast@1.2 and mean PR of the correct answers vs step."""
    t = last_turn(log)
    panels = (_fast(log), Panel(f"heldout/pr_correct/turn{t}", f"held-out mean PR of correct, turn {t}"))
    return plot_panels(log, panels, axes, variants=variants)


def plot_stts_seeds(stts: pd.DataFrame, ax=None, *, p: float = 1.2, mode: str = "best"):
    """STTS over 8 turns: Fast@p by turn t (``mode="best"``: best of history; ``"last"``: the answer at turn t)
    for vanilla history and the best-w window, mean over seeds (trloo checkpoints) with a 95 % t-band."""
    fig, ax = new_axes(ax, figsize=(4.5, 3.0))
    sub = stts[(stts["mode"] == mode) & ((stts["p"].astype(float) - p).abs() < 1e-9)]
    if sub.empty:
        note_missing(ax, f"stts fast@{p:g} ({mode})")
    labels = {"vanilla": "vanilla history", "best_w": "best-w context"}
    for i, context in enumerate(c for c in ("vanilla", "best_w") if c in set(sub["context"])):
        _draw(ax, seed_bands(sub[sub["context"] == context], "turn"), "turn", labels[context],
              method_color(context, i), marker="o", markersize=3)
    ax.set_xlabel("turn")
    ax.set_ylabel(f"Fast@{p:g}, {'best of history' if mode == 'best' else 'last turn'} (%)")
    percent_axis(ax)
    ax.xaxis.get_major_locator().set_params(integer=True)
    if ax.get_lines():
        ax.legend(frameon=False)
    return fig, ax


__all__ = ["ESTIMATOR_VARIANTS", "HACKING_VARIANTS", "MRS_VARIANTS", "PRS_VARIANTS", "TURN_VARIANTS", "last_turn",
           "plot_estimators", "plot_hacking_check", "plot_mrs", "plot_panels", "plot_prs", "plot_seed_bands",
           "plot_stts_seeds", "plot_turns", "seed_bands"]
