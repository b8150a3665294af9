import numpy as np
import pandas as pd
import pytest

from drk.data.paper import FAST_P_COLUMNS, PAPER_DIR, load_fast_p
from drk.figures.tables import build_fast_p_table, table_to_latex, table_to_markdown


@pytest.fixture
def ours():
    return pd.DataFrame([dict(model="drk-8B (ours)", level=1, p=p, fast_p=0.25, source="ours")
                         for p in FAST_P_COLUMNS.values()])


@pytest.mark.parametrize("mode, name", [("eager", "table1_fast_p_eager.csv"),
                                        ("compile", "table2_fast_p_torch_compile.csv")])
def test_tables_contain_every_paper_number(mode, name):
    csv = pd.read_csv(PAPER_DIR / name, comment="#")
    table = build_fast_p_table(load_fast_p(mode).frame)
    assert table.shape == (len(csv) // 3, 12)
    md = table_to_markdown(table)
    lines = {line.split(" | ")[1]: line for line in md.splitlines()[2:]}
    for row in csv.itertuples():
        cells = lines[row.model].strip("| ").split(" | ")[2:]
        level_cells = cells[(row.level - 1) * 4:(row.level - 1) * 4 + 4]
        assert level_cells == [f"{getattr(row, c):.1f}" for c in FAST_P_COLUMNS]


def test_our_rows_follow_paper_rows_with_missing_cells_dashed(ours):
    table = build_fast_p_table(load_fast_p().frame, ours)
    assert table.index[-1] == ("ours", "drk-8B (ours)")
    assert np.isnan(table.loc[("ours", "drk-8B (ours)"), (2, 1.0)])
    last = table_to_markdown(table).splitlines()[-1]
    assert last.startswith("| ours | drk-8B (ours) | 25.0 | 25.0 | 25.0 | 25.0 | – |")


def test_latex_groups_levels_and_separates_sources(ours):
    tex = table_to_latex(build_fast_p_table(load_fast_p().frame, ours), caption="Fast@p, 100% honest", label="t1")
    assert tex.count(r"\multicolumn{4}{c}{Level") == 3
    assert tex.count(r"\midrule") == 2
    assert r"100\% honest" in tex and r"\label{t1}" in tex
    assert "drk-8B (ours) & 25.0" in tex and "& --" in tex
