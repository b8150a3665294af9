"""Tables 1 and 2: Fast@p per model and level, paper rows beside ours, rendered as Markdown and LaTeX.

The renderers are written here (a few lines each) rather than through ``DataFrame.to_markdown``, which needs the
optional ``tabulate`` package, so the tables render with drk's core dependencies only.
"""

from __future__ import annotations

import pandas as pd

_LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def build_fast_p_table(paper: pd.DataFrame, ours: pd.DataFrame | None = None) -> pd.DataFrame:
    """Pivot long Fast@p rows into the paper's layout: one row per (source, model), one column per (level, p).

    Args:
        paper: long rows ``model, level, p, fast_p`` (fraction), e.g. ``load_fast_p("eager").frame``.
        ours: the same columns for our measured models (e.g. ``drk.eval.summary.fast_p_long``); their ``source``
            column is kept when present, else set to ``"ours"``.

    Returns:
        Values are fractions; index ``(source, model)`` with paper rows first in their CSV order, columns a
        ``(level, p)`` MultiIndex; cells a model was not measured on are NaN.
    """
    frames = [paper.assign(source=paper.get("source", "paper"))]
    if ours is not None and len(ours):
        frames.append(ours.assign(source=ours["source"] if "source" in ours else "ours"))
    rows = pd.concat(frames, ignore_index=True)
    order = list(dict.fromkeys(zip(rows["source"], rows["model"], strict=True)))
    table = rows.pivot_table(index=["source", "model"], columns=["level", "p"], values="fast_p", aggfunc="first")
    return table.reindex(pd.MultiIndex.from_tuples(order, names=["source", "model"])).sort_index(axis=1)


def _fmt(value: float, decimals: int) -> str:
    return "–" if pd.isna(value) else f"{100 * value:.{decimals}f}"


def table_to_markdown(table: pd.DataFrame, decimals: int = 1) -> str:
    """Render a :func:`build_fast_p_table` result as a GitHub Markdown table (values in percent)."""
    header = ["source", "model"] + [f"L{level} Fast@{p:g}" for level, p in table.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * 2 + "---:|" * len(table.columns)]
    for (source, model), values in table.iterrows():
        cells = [str(source), str(model)] + [_fmt(v, decimals) for v in values]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def frame_to_markdown(frame: pd.DataFrame, decimals: int = 3) -> str:
    """Any small DataFrame as a GitHub Markdown table (floats rounded; no tabulate dependency)."""
    def cell(v) -> str:
        return f"{v:.{decimals}f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in str(text))


def table_to_latex(table: pd.DataFrame, decimals: int = 1, caption: str | None = None,
                   label: str | None = None) -> str:
    """Render a :func:`build_fast_p_table` result as a booktabs ``tabular`` (values in percent).

    Levels become column groups (``\\multicolumn``); a ``\\midrule`` separates paper rows from ours.
    """
    levels = list(dict.fromkeys(level for level, _ in table.columns))
    groups = [[p for lv, p in table.columns if lv == level] for level in levels]
    lines = [r"\begin{tabular}{ll" + "".join("r" * len(g) for g in groups) + "}", r"\toprule"]
    lines.append(" & & " + " & ".join(
        rf"\multicolumn{{{len(g)}}}{{c}}{{Level {lv}}}" for lv, g in zip(levels, groups, strict=True)) + r" \\")
    start = 3
    rules = []
    for g in groups:
        rules.append(rf"\cmidrule(lr){{{start}-{start + len(g) - 1}}}")
        start += len(g)
    lines.append(" ".join(rules))
    lines.append("Source & Model & " + " & ".join(f"Fast@{p:g}" for g in groups for p in g) + r" \\")
    lines.append(r"\midrule")
    previous = None
    for (source, model), values in table.iterrows():
        if previous is not None and source != previous:
            lines.append(r"\midrule")
        previous = source
        cells = [_latex_escape(source), _latex_escape(model)] + [_fmt(v, decimals) for v in values]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    body = "\n".join(lines)
    if caption or label:
        extra = (rf"\caption{{{_latex_escape(caption)}}}" + "\n" if caption else "") + (
            rf"\label{{{label}}}" + "\n" if label else "")
        body = "\\begin{table}[t]\n\\centering\n" + body + "\n" + extra + "\\end{table}"
    return body.replace("–", "--") + "\n"
