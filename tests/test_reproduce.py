"""The main job: every notebook executes with the quick parameters and every figure and table appears."""

import pytest

from drk.reproduce import EXPECTED_FIGURES, MINI2_CURVES, MINI_RESULTS, main, missing_outputs, plan


def test_plan_covers_every_notebook_and_plots_the_committed_mini_runs(tmp_path):
    runs = plan(tmp_path / "out", tmp_path / "figs", "cpu")
    assert {r.notebook[:2] for r in runs} == {"01", "02", "03", "04", "05"}
    (figures,) = [r for r in runs if r.notebook.startswith("05")]
    assert figures.quick["training_logs_dir"] == MINI_RESULTS and figures.full["rerun_mini"] is False  # CPU
    assert figures.quick["mini2_runs_dir"] == figures.full["mini2_runs_dir"] == MINI2_CURVES  # the committed export
    from drk.mini import DEFAULT_VARIANTS, TRAINING_RUNS

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


def test_quick_figures_do_not_replace_the_committed_ones(tmp_path, capsys):
    from drk.reproduce import COMMITTED_FIGURES, figures_dir

    assert figures_dir(None, quick=False, out=tmp_path) == COMMITTED_FIGURES
    assert figures_dir(None, quick=True, out=tmp_path) == tmp_path / "figures"
    assert figures_dir(tmp_path / "mine", quick=True, out=tmp_path) == tmp_path / "mine"
    # naming the committed folder with --quick is allowed, and said before anything runs (--only matches nothing)
    assert main(["--quick", "--figures", str(COMMITTED_FIGURES), "--out", str(tmp_path), "--only", "none"]) == 0
    assert "committed full-parameter" in capsys.readouterr().err


def _parameters(notebook):
    """Names the notebook's ``parameters`` cell assigns, and the source of its other code cells."""
    import json
    import re

    from drk.reproduce import REPO_ROOT

    nb = json.loads((REPO_ROOT / "notebooks" / notebook).read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    (params,) = [c for c in code if "parameters" in c["metadata"].get("tags", [])]
    names = re.findall(r"^(\w+) = ", "".join(params["source"]), re.M)
    rest = "\n".join("".join(c["source"]) for c in code if c is not params)
    return nb, names, rest


def test_notebooks_declare_what_the_runner_passes_and_read_what_they_declare(tmp_path):
    import re

    for run in plan(tmp_path / "out", tmp_path / "figs", "cuda"):
        nb, declared, rest = _parameters(run.notebook)
        assert all(c.get("id") for c in nb["cells"]), f"{run.notebook}: a cell without an id"
        passed = set(run.quick) | set(run.full)
        assert passed <= set(declared), f"{run.label}: passes undeclared {sorted(passed - set(declared))}"
        unread = [name for name in declared if not re.search(rf"\b{name}\b", rest)]
        assert unread == [], f"{run.notebook}: parameters nothing reads: {unread}"
