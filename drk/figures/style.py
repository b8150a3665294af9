"""One place for the look of every drk figure: palette, fonts, saving.

Why a module: figures come from several notebooks and must look like one paper. The palette is the
Okabe-Ito colour-blind-safe set; every figure is written as PNG (for READMEs) and PDF (for papers).
"""

from __future__ import annotations

from pathlib import Path

#: Okabe-Ito colour-blind-safe palette, in a fixed order so a method keeps its colour across figures.
PALETTE: list[str] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]

#: Fixed colours for the methods that appear in many figures.
METHOD_COLORS: dict[str, str] = {
    "trloo": PALETTE[0],
    "grpo": PALETTE[1],
    "single_turn": PALETTE[2],
    "gamma0": PALETTE[3],
    "no_hack_check": PALETTE[4],
    "mrs": PALETTE[5],
    "pr": PALETTE[2],
    "prs_soft": PALETTE[3],
    "prs_hard": PALETTE[4],
    "vanilla": PALETTE[1],
    "best_w": PALETTE[0],
}


def apply_style() -> None:
    """Set matplotlib/seaborn defaults shared by every figure (idempotent)."""
    import matplotlib as mpl
    import seaborn as sns

    mpl.use("Agg", force=False)
    sns.set_theme(context="paper", style="whitegrid", palette=PALETTE)
    mpl.rcParams.update(
        {
            "figure.dpi": 120,
            "savefig.dpi": 200,
            "savefig.bbox": "tight",
            "axes.titlesize": 10,
            "axes.labelsize": 9,
            "legend.fontsize": 8,
            "xtick.labelsize": 8,
            "ytick.labelsize": 8,
            "pdf.fonttype": 42,
        }
    )


def method_color(name: str, index: int = 0) -> str:
    """Colour for a method name; unknown names take palette entry ``index``."""
    return METHOD_COLORS.get(name.lower(), PALETTE[index % len(PALETTE)])


def save_figure(fig, out_dir: str | Path, stem: str, caption: str | None = None) -> list[Path]:
    """Write ``fig`` as ``<out_dir>/<stem>.png`` and ``.pdf`` (and ``.txt`` caption); return the paths.

    The caption file records where the data came from, so a figure never travels without its source.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.png", out / f"{stem}.pdf"]
    for path in paths:
        fig.savefig(path)
    if caption:
        cap = out / f"{stem}.txt"
        cap.write_text(caption.strip() + "\n")
        paths.append(cap)
    return paths
