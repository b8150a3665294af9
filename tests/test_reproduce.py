"""The main job: every notebook executes with the quick parameters and every figure and table appears."""

import pytest

from drk.reproduce import EXPECTED_FIGURES, TRAINING_RUNS, main, missing_outputs, plan


def test_plan_covers_every_notebook_and_training_method(tmp_path):
    runs = plan(tmp_path / "out", tmp_path / "figs", "cpu")
    assert {r.notebook[:2] for r in runs} == {"01", "02", "03", "04", "05"}
    assert [r.quick["method"] for r in runs if r.notebook.startswith("03")] == list(TRAINING_RUNS)
    prs_runs = [r for r in runs if r.label.startswith("03:prs")]
    assert all(r.quick["overrides"]["prs_on_missing"] == "keep" for r in prs_runs)  # no profiles on CPU
    assert all("prs_on_missing" not in r.full["overrides"] for r in prs_runs)


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
