"""The main job: every notebook executes with the quick parameters and every figure and table appears."""

import pytest

from drk.reproduce import EXPECTED_FIGURES, MINI_RESULTS, TRAINING_RUNS, main, missing_outputs, plan


def test_plan_covers_every_notebook_and_plots_the_committed_mini_runs(tmp_path):
    runs = plan(tmp_path / "out", tmp_path / "figs", "cpu")
    assert {r.notebook[:2] for r in runs} == {"01", "02", "03", "04", "05"}
    (figures,) = [r for r in runs if r.notebook.startswith("05")]
    assert figures.quick["training_logs_dir"] == MINI_RESULTS and figures.full["rerun_mini"] is False  # CPU
    from drk.mini import DEFAULT_VARIANTS

    assert set(DEFAULT_VARIANTS) <= set(TRAINING_RUNS)


def test_missing_outputs_names_what_is_absent(tmp_path):
    assert f"{EXPECTED_FIGURES[0]}.png" in missing_outputs(tmp_path)
    (tmp_path / f"{EXPECTED_FIGURES[0]}.png").write_bytes(b"")
    assert f"{EXPECTED_FIGURES[0]}.png" in missing_outputs(tmp_path)  # empty counts as missing


@pytest.mark.slow
def test_quick_reproduction_writes_every_figure_and_table(tmp_path):
    figures = tmp_path / "figures"
    assert main(["--quick", "--out", str(tmp_path / "out"), "--figures", str(figures), "--device", "cpu"]) == 0
    assert missing_outputs(figures) == []
    assert (tmp_path / "out" / "ours" / "train" / "trloo").is_dir()
    assert len(list((tmp_path / "out" / "notebooks").glob("*.ipynb"))) == len(plan(tmp_path, figures, "cpu"))
