import numpy as np
import pandas as pd
import pytest

from drk.data.paper import PAPER_DIR, load_fast_p, load_fig2_curves, load_fig10_examples, read_commented_csv


def _csv(name):
    return pd.read_csv(PAPER_DIR / name, comment="#")


def test_read_commented_csv_skips_comments_and_keeps_them_as_source():
    frame, source = read_commented_csv(PAPER_DIR / "table1_fast_p_eager.csv")
    assert list(frame.columns)[:2] == ["model", "level"]
    assert "Table 1" in source and "#" not in source


@pytest.mark.parametrize("mode, name", [("eager", "table1_fast_p_eager.csv"),
                                        ("compile", "table2_fast_p_torch_compile.csv")])
def test_load_fast_p_is_long_and_in_fractions(mode, name):
    wide = _csv(name)
    long, source = load_fast_p(mode)
    assert len(long) == 4 * len(wide) and set(long["p"]) == {1.0, 1.2, 1.5, 2.0}
    row = wide.iloc[3]
    got = long[(long.model == row.model) & (long.level == row.level) & (long.p == 1.2)]["fast_p"].item()
    assert got == pytest.approx(row.fast1_2 / 100)
    assert (long["reference_mode"] == mode).all() and (long["source"] == "paper").all() and source


def test_load_fast_p_rejects_unknown_mode():
    with pytest.raises(ValueError, match="eager"):
        load_fast_p("max-autotune")


def test_fig2_curves_drop_unreadable_cells():
    wide = _csv("fig2_training_curves_digitized.csv")
    long, _ = load_fig2_curves()
    assert len(long) == wide.drop(columns="step").notna().sum().sum()
    without = long[~long.hacking_check]
    assert without["step"].max() == wide.loc[wide.fast1_without_hacking_check.notna(), "step"].max()
    assert np.isclose(long["value"].max(), wide.drop(columns="step").max().max() / 100)


def test_fig10_examples_keep_coverage_fraction():
    frame, source = load_fig10_examples()
    assert set(frame["case"]) == {"lazy_optimization", "better_fusion"}
    assert frame["coverage"].between(0, 1).all() and "Figure 10" in source
