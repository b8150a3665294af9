"""Figure 3: a diagram of OUR evaluation environment (drk.gym), drawn from a small spec with matplotlib."""

from __future__ import annotations

from dataclasses import dataclass

from drk.figures._util import new_axes
from drk.figures.style import PALETTE


@dataclass(frozen=True)
class Architecture:
    """What the diagram shows: clients, the parent pool, its workers, and the stages one candidate goes through."""

    clients: tuple[str, ...] = ("drk.train\ntrainer rollouts", "drk.eval\nevaluate_policy / STTS")
    parent: str = ("drk.gym.Pool  (parent)\nresult cache; format + static checks\n"
                   "never imports candidate code")
    workers: tuple[str, ...] = ("threads for GPU 0\n(timing lock)", "threads for GPU 1\n(timing lock)",
                                "threads for GPU k\n(timing lock)")
    sandbox: str = ("warm judge (never runs candidate code) + a fresh sandboxed runner\n"
                    "per candidate: only data crosses; a crash or hang is a status")
    stages: tuple[tuple[str, str], ...] = (
        ("reference outputs", "judge: built before the candidate's process has its code"),
        ("candidate import", "runner: other uid, PID/net namespaces, private /tmp"),
        ("correctness", "secret-seeded + hidden input sets, compared in the judge"),
        ("hacking checks", "probe variants in a second runner, static checks"),
        ("timing", "judge's clock bounds the runner's; L2 flush, medians (GPU)"),
        ("profiling ratio", "own Triton kernels / all device time (a runner claim)"),
        ("feedback", "concise: error head, diff, speedup, top kernels"),
    )


OUR_ARCHITECTURE = Architecture()


def _box(ax, x, y, w, h, text, color, fontsize=7, **kw):
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                facecolor=color, edgecolor="0.25", linewidth=0.8, **kw))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize)


def _arrow(ax, start, end, text="", text_at=None, **kw):
    ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "-|>", "color": "0.25", "lw": 0.8, **kw})
    if text:
        x, y = text_at or ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.12)
        ax.text(x, y, text, ha="center", fontsize=6, color="0.3")


def plot_architecture(spec: Architecture = OUR_ARCHITECTURE, ax=None):
    """Draw clients -> pool -> per-GPU workers -> isolated child running the evaluation stages.

    Returns:
        ``(fig, ax)``; one box per client, the pool, each worker, the sandbox and each stage.
    """
    fig, ax = new_axes(ax, figsize=(10.0, 4.6))
    height = 5.6
    for i, client in enumerate(spec.clients):
        y = height - 1.6 - i * 1.6
        _box(ax, 0.1, y, 1.9, 0.9, client, PALETTE[5] + "55")
        _arrow(ax, (2.0, y + 0.45), (2.8, 2.8), "(problem, reply)" if i == 0 else "")
    _box(ax, 2.8, 2.1, 2.5, 1.4, spec.parent, PALETTE[0] + "44")
    for i, worker in enumerate(spec.workers):
        y = height - 1.4 - i * 1.5
        _box(ax, 6.0, y, 1.5, 0.7, worker, PALETTE[2] + "44")
        _arrow(ax, (5.3, 2.8), (6.0, y + 0.35))
        _arrow(ax, (7.5, y + 0.35), (8.2, y + 0.35), linestyle="--")
    _box(ax, 8.2, 0.1, 4.6, height - 0.2, "", PALETTE[4] + "22")
    ax.text(10.5, height - 0.35, spec.sandbox, ha="center", va="center", fontsize=6, style="italic")
    step = (height - 0.9) / len(spec.stages)
    for i, (name, detail) in enumerate(spec.stages):
        y = height - 0.6 - (i + 1) * step + 0.08
        _box(ax, 8.4, y, 4.2, step - 0.16, f"{i + 1}. {name}\n{detail}", "white", fontsize=6)
        if i:
            _arrow(ax, (10.5, y + step + 0.0), (10.5, y + step - 0.16 + 0.08))
    _arrow(ax, (8.2, 0.4), (4.05, 2.1), "EvalResult (JSON) -> cache -> client", text_at=(4.6, 0.35),
           connectionstyle="arc3,rad=-0.2")
    ax.set_xlim(0, 12.9)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    return fig, ax
