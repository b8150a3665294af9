"""Every paper figure and table, as functions of data.

Each ``plot_*`` function takes a tidy ``pandas.DataFrame`` (and optionally an ``ax``), returns ``(fig, ax)``
(``(fig, axes)`` for multi-panel figures), and neither loads nor saves. Loading the paper's numbers lives in
:mod:`drk.data.paper`; loading our results and saving (PNG + PDF + caption + data CSV) in :mod:`drk.figures.build`;
shared styling in :mod:`drk.figures.style`. ``figures/README.md`` maps every paper figure to its function.

    overview      Figure 1 (Fast@1.2 bars)             tables        Tables 1 and 2 (Markdown, LaTeX)
    hacking       Figure 2 left, Figure 8              profiling     Figure 2 right / Figure 10
    architecture  Figure 3 (our drk.gym)               training      Figures 4, 5/7, 9 (training-log schema)
    scaling       Figure 6 (STTS)                      bias          Eq. 4 (self-inclusion bias)
"""

from drk.figures.architecture import OUR_ARCHITECTURE, Architecture, plot_architecture
from drk.figures.hacking import fig2_from_training_log, plot_hacking_check_curves, plot_hacking_ratio
from drk.figures.overview import FIG1_MODELS, plot_fast_p_bars
from drk.figures.profiling import plot_profiling_examples
from drk.figures.scaling import plot_stts
from drk.figures.tables import build_fast_p_table, table_to_latex, table_to_markdown
from drk.figures.training import (
    LOG_COLUMNS,
    Panel,
    plot_fast_p_vs_step,
    plot_fast_p_vs_turn,
    plot_metric_vs_step,
    plot_prs_ablation,
    plot_training_panels,
    validate_training_log,
)

__all__ = [
    "FIG1_MODELS", "LOG_COLUMNS", "OUR_ARCHITECTURE", "Architecture", "Panel", "build_fast_p_table",
    "fig2_from_training_log", "plot_architecture", "plot_fast_p_bars", "plot_fast_p_vs_step", "plot_fast_p_vs_turn",
    "plot_hacking_check_curves", "plot_hacking_ratio", "plot_metric_vs_step", "plot_profiling_examples",
    "plot_prs_ablation", "plot_stts", "plot_training_panels", "table_to_latex", "table_to_markdown",
    "validate_training_log",
]
