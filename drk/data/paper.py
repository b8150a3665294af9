"""The paper's published numbers, read from the bundled CSVs in ``drk/data/paper/``.

Convention shared with every drk table and figure: rates (Fast@p, hacking ratio, profiling ratio) are stored as
fractions in [0, 1] and shown as percent only when rendered. The CSVs hold the paper's percents as printed.

Each CSV opens with ``#`` comment lines that say where its numbers come from (table, figure, digitisation
accuracy, known typos). Every loader returns a :class:`PaperData`: a tidy ``DataFrame`` plus that comment, so a
figure or table built from it can cite its source in the caption.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import NamedTuple

import pandas as pd

PAPER_DIR = Path(__file__).resolve().parent / "paper"

#: Fast@p thresholds of Tables 1 and 2, by CSV column.
FAST_P_COLUMNS: dict[str, float] = {"fast1": 1.0, "fast1_2": 1.2, "fast1_5": 1.5, "fast2": 2.0}

#: The CSV behind each reference mode (Table 1: eager PyTorch reference; Table 2: torch.compile reference).
FAST_P_FILES: dict[str, str] = {
    "eager": "table1_fast_p_eager.csv",
    "compile": "table2_fast_p_torch_compile.csv",
}


class PaperData(NamedTuple):
    """A tidy table of paper numbers and the source comment of the CSV it came from."""

    frame: pd.DataFrame
    source: str


def read_commented_csv(path: str | Path) -> PaperData:
    """Read a CSV whose leading ``#`` lines are a source comment.

    Args:
        path: the CSV file.

    Returns:
        The table as stored (wide) and the comment lines joined, without their ``#``.
    """
    lines = Path(path).read_text().splitlines()
    comment = [line.lstrip("#").strip() for line in lines if line.startswith("#")]
    body = "\n".join(line for line in lines if not line.startswith("#"))
    return PaperData(pd.read_csv(io.StringIO(body)), " ".join(comment))


def load_fast_p(reference_mode: str = "eager") -> PaperData:
    """Table 1 (``"eager"``) or Table 2 (``"compile"``) in long form.

    Returns:
        Columns ``model, level, p, fast_p`` (a fraction of all samples: the paper's percent / 100),
        ``reference_mode`` and ``source="paper"``; one row per (model, level, p).
    """
    if reference_mode not in FAST_P_FILES:
        raise ValueError(f"reference_mode={reference_mode!r}: choose one of {tuple(FAST_P_FILES)}")
    wide, source = read_commented_csv(PAPER_DIR / FAST_P_FILES[reference_mode])
    return PaperData(fast_p_to_long(wide, reference_mode=reference_mode, source="paper"), source)


def fast_p_to_long(wide: pd.DataFrame, *, reference_mode: str, source: str) -> pd.DataFrame:
    """Melt a ``model, level, fast1, fast1_2, ...`` table (percent) into ``model, level, p, fast_p`` (fraction)."""
    cols = [c for c in FAST_P_COLUMNS if c in wide.columns]
    long = wide.melt(id_vars=["model", "level"], value_vars=cols, var_name="column", value_name="fast_p")
    long["fast_p"] = long["fast_p"] / 100.0
    long["p"] = long.pop("column").map(FAST_P_COLUMNS)
    long["reference_mode"] = reference_mode
    long["source"] = source
    return long[["model", "level", "p", "fast_p", "reference_mode", "source"]]


def load_fig2_curves() -> PaperData:
    """Figure 2 (left), digitised: Fast@p (%) vs RL step with and without the hacking check.

    Returns:
        Columns ``step, p, hacking_check (bool), value`` (a fraction: the digitised percent / 100) and
        ``source="paper"``; unreadable cells are dropped.
    """
    wide, source = read_commented_csv(PAPER_DIR / "fig2_training_curves_digitized.csv")
    series = {
        "fast1_with_hacking_check": (1.0, True),
        "fast1_without_hacking_check": (1.0, False),
        "fast1_2_with_hacking_check": (1.2, True),
    }
    rows = [
        {"step": int(step), "p": p, "hacking_check": check, "value": float(value) / 100.0, "source": "paper"}
        for column, (p, check) in series.items()
        for step, value in zip(wide["step"], wide[column], strict=True)
        if pd.notna(value)
    ]
    return PaperData(pd.DataFrame(rows), source)


def load_fig10_examples() -> PaperData:
    """Figure 10: the lazy and the fused candidate's runtimes, speedup and profiling ratio (coverage in [0, 1]).

    Returns:
        The CSV's columns plus ``source="paper"``; one row per case.
    """
    frame, source = read_commented_csv(PAPER_DIR / "fig10_profiling_examples.csv")
    frame["source"] = "paper"
    return PaperData(frame, source)
