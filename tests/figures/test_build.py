import json
from pathlib import Path

import pandas as pd
import pytest

from drk.figures.build import (
    load_training_log,
    make_all,
    make_fig2_left,
    make_fig6,
    make_fig10,
    make_mini_summary,
    make_tables,
    make_training_figures,
)
from drk.figures.style import save_figure
from drk.figures.training import plot_metric_vs_step


def test_save_figure_writes_non_empty_png_pdf_and_caption(tmp_path, training_log):
    fig, _ = plot_metric_vs_step(training_log, "entropy")
    paths = save_figure(fig, tmp_path, "x", caption="from somewhere")
    assert [p.suffix for p in paths] == [".png", ".pdf", ".txt"]
    assert all(p.stat().st_size > 0 for p in paths)
    assert paths[0].read_bytes()[:4] == b"\x89PNG" and paths[1].read_bytes()[:4] == b"%PDF"


def test_make_all_paper_only(tmp_path):
    names = {p.name for p in make_all(tmp_path)}
    for stem in ("fig1_fast_p_overview", "fig2_left_hacking_check", "fig10_profiling_examples", "fig3_architecture"):
        assert {f"{stem}.png", f"{stem}.pdf", f"{stem}.txt"} <= names
    assert {"table1_fast_p_eager.md", "table1_fast_p_eager.tex", "table2_fast_p_torch_compile.md"} <= names
    assert "Table 1" in (tmp_path / "fig1_fast_p_overview.txt").read_text()
    assert not any(n.startswith(("fig4", "fig6")) for n in names)


def test_make_all_with_our_results(tmp_path, training_log):
    ours = tmp_path / "ours"
    (ours / "eval").mkdir(parents=True)
    (ours / "stts").mkdir()
    half = training_log["method"].isin(["trloo", "grpo"])
    training_log[~half].to_json(ours / "training_log.jsonl", orient="records", lines=True)
    for method in ("trloo", "grpo"):  # as drk.train writes them: one wide row per step
        wide = training_log[training_log.method == method].pivot_table(index="step", columns="metric", values="value")
        (ours / "train" / method / "seed0").mkdir(parents=True)
        wide.reset_index().to_json(ours / "train" / method / "seed0" / "log.jsonl", orient="records", lines=True)
    log = load_training_log(ours)
    assert set(log.method) == set(training_log.method) and set(log.metric) == set(training_log.metric)
    pd.DataFrame({"case": ["decoy"], "speedup": [None], "coverage": [0.0], "source": ["ours"]}).to_csv(
        ours / "profiling_cases.csv", index=False)
    records = [dict(problem=f"L1/p{i}", level=1, sample=s, turn=t, status="correct", correct=True, hacked=False,
                    speedup=1.3, reference_mode="eager", context="best_w") for i in range(2) for s in range(2)
               for t in (1, 2, 3)]
    for path in (ours / "eval" / "my-model.jsonl", ours / "stts" / "best_w.jsonl"):
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "figs"
    names = {p.name for p in make_training_figures(out, ours) + make_fig6(out, ours) + make_tables(out, ours)}
    for stem in ("fig4_fast_p_vs_step", "fig4_fast_p_vs_turn", "fig5_7_training_dynamics", "fig6_stts",
                 "fig8_hacking_ratio", "fig9_prs"):
        assert f"{stem}.png" in names
    md = (tmp_path / "figs" / "table1_fast_p_eager.md").read_text()
    assert "| ours | my-model | 100.0 | 100.0 | 0.0 | 0.0 | – |" in md
    assert "Fast@1.2" in (tmp_path / "figs" / "fig6_stts.txt").read_text()
    assert "my-model" not in (tmp_path / "figs" / "table2_fast_p_torch_compile.md").read_text()
    make_fig10(out, ours), make_fig2_left(out, ours), make_mini_summary(out, ours)
    assert "profiling_cases.csv" in (out / "fig10_profiling_examples.txt").read_text()
    fig10 = pd.read_csv(out / "fig10_profiling_examples.csv")
    assert set(fig10["source"]) == {"paper", "ours H200: suite L2/01", "ours H200: mini2 m2_00", "ours: this run"}
    for written in out.iterdir():  # captions and table headers name our data without this machine's paths
        if written.suffix in (".txt", ".md", ".tex"):
            assert str(tmp_path) not in written.read_text(), written.name


def test_tables_carry_the_bundled_solutions_oracle_row_where_measured(tmp_path):
    from drk.figures.build import ORACLE_MODEL, make_tables, oracle_fast_p_rows
    from drk.problems import load_gpu_results

    rows = oracle_fast_p_rows("eager")
    assert rows is not None and set(rows["level"]) == {1, 2, 3}
    assert ((rows["fast_p"] >= 0) & (rows["fast_p"] <= 1)).all()
    # Fast@p can only fall as p rises
    for _, sub in rows.groupby("level"):
        values = sub.sort_values("p")["fast_p"].tolist()
        assert values == sorted(values, reverse=True)
    compiled_rows = oracle_fast_p_rows("compile")  # the levels measured against torch.compile
    measured = load_gpu_results().query("reference_mode == 'compile' and timing_policy == 'drk'")
    assert set(compiled_rows["level"]) == set(measured["level"]) == {1, 2, 3}
    make_tables(tmp_path)
    eager = (tmp_path / "table1_fast_p_eager.md").read_text()
    compiled = (tmp_path / "table2_fast_p_torch_compile.md").read_text()
    assert ORACLE_MODEL in eager and ORACLE_MODEL in compiled.split("-->", 1)[1]
    # each table's note names its own pass (date, commit), not the other reference's
    assert "compile reference: levels 2 and 3" in compiled and "eager reference: measured" not in compiled
    assert "eager reference: measured" in eager and "compile reference: levels" not in eager
    oracle_line = next(line for line in compiled.splitlines() if ORACLE_MODEL in line and line.startswith("|"))
    assert "–" not in oracle_line


def test_a_suite_measured_against_torch_compile_gives_table_2_its_oracle_row(tmp_path, monkeypatch):
    """benchmarks/suite_gpu.py --reference-modes eager compile writes a reference_mode column: each table's oracle row
    comes from its own mode's rows only."""
    import drk.problems as problems
    from drk.figures.build import ORACLE_MODEL, make_tables, oracle_fast_p_rows

    shipped = problems.load_gpu_results().query("reference_mode == 'eager'")
    eager = shipped.assign(reference_mode="eager")
    compiled = shipped.assign(reference_mode="compile", speedup=shipped["speedup"] / 100)  # nothing is fast
    compiled = compiled[compiled["level"] != 1]  # a level not measured against torch.compile
    path = tmp_path / "gpu_results.csv"
    path.write_text("# test\n" + pd.concat([eager, compiled]).to_csv(index=False))
    read = problems.load_gpu_results
    monkeypatch.setattr(problems, "GPU_RESULTS", path)
    monkeypatch.setattr(problems, "load_gpu_results", lambda: read(path))
    compile_rows = oracle_fast_p_rows("compile")
    assert compile_rows is not None and (compile_rows["fast_p"] == 0).all()
    assert (oracle_fast_p_rows("eager")["fast_p"] > 0).any()
    make_tables(tmp_path / "tables")
    table2 = (tmp_path / "tables" / "table2_fast_p_torch_compile.md").read_text()
    assert ORACLE_MODEL in table2.split("-->", 1)[1] and "compile reference" in table2
    oracle_line = next(line for line in table2.splitlines() if ORACLE_MODEL in line and line.startswith("|"))
    assert oracle_line.count("| – ") == 4  # level 1: not measured, shown as such


def test_fig10s_h200_cases_come_from_the_committed_measurements():
    """Our H200 rows of Figure 10 are the committed suite and mini2 measurements, one problem each: the lazy
    candidates' tiny profiling ratio, the fused ones' full one, the mini2 decoy hacked with a ratio of 0."""
    from drk.figures.build import FIG10_MINI2_PROBLEM, h200_profiling_cases
    from drk.mini2.verdicts import load_verdicts
    from drk.problems import load_gpu_results

    rows = h200_profiling_cases().set_index(["source", "case"])
    suite = load_gpu_results(reference_mode="eager")
    lazy = suite[(suite["label"] == "L2/01_Matmul_Bias_ReLU") & (suite["kind"] == "lazy")
                 & (suite["timing_policy"] == "drk")].iloc[0]
    assert rows.loc[("ours H200: suite L2/01", "lazy_optimization"), "coverage"] == lazy["coverage"] < 0.05
    assert ("ours H200: suite L2/01", "decoy") not in rows.index  # the suite has no decoy
    mini2 = rows.loc["ours H200: mini2 m2_00"]
    assert mini2.loc["decoy", "status"] == "hacked" and mini2.loc["decoy", "coverage"] == 0
    assert mini2.loc["better_fusion", "coverage"] == 1.0 > mini2.loc["lazy_optimization", "coverage"]
    path = Path(__file__).resolve().parents[2] / "results" / "mini2" / "verdicts.csv"
    table = [v for v in load_verdicts(path, check_sources=False)
             if v.problem == FIG10_MINI2_PROBLEM and v.program.startswith("FUSE") and v.correct]
    assert mini2.loc["better_fusion", "speedup"] == max(v.speedup for v in table)  # the fastest fused program


def test_table_1_gets_the_trained_mini2_policies_row_from_the_grids_endpoints(tmp_path, monkeypatch):
    """The mini2 row is the mean over seeds of trloo's per-run endpoints (claims_runs.csv), in the L2 cells only,
    in Table 1 (eager) only."""
    import drk.figures.build as build

    runs = pd.DataFrame([
        {"setting": "main", "variant": v, "seed": s, "metric": m, "value": value}
        for v, base in (("trloo", 0.4), ("grpo", 0.1)) for s in range(3)
        for m, value in (("fast@1.2/turn3", base + 0.1 * s), ("fast@1/turn3", base + 0.2),
                         ("fast@1.2/turn1", 0.9), ("hacked/turn1", 0.5))])
    path = tmp_path / "claims_runs.csv"
    runs.to_csv(path, index=False)
    rows = build.mini2_fast_p_rows("eager", path).set_index("p")
    assert set(rows.index) == {1.0, 1.2} and (rows["level"] == 2).all()  # turn 3 only, no hacking ratio
    assert rows.loc[1.2, "fast_p"] == pytest.approx(0.5) and rows.loc[1.0, "fast_p"] == pytest.approx(0.6)
    assert "3 seeds" in rows.loc[1.2, "model"]
    assert build.mini2_fast_p_rows("eager", tmp_path / "x") is None
    monkeypatch.setattr(build, "MINI2_RUNS_CSV", path)
    monkeypatch.setattr(build, "MINI2_COMPILE_RUNS_CSV", tmp_path / "x")  # Table 2's row: not measured here
    assert build.mini2_fast_p_rows("compile") is None
    build.make_tables(tmp_path / "tables")
    table1 = (tmp_path / "tables" / "table1_fast_p_eager.md").read_text()
    line = next(row for row in table1.splitlines() if row.startswith("| ours (mini2)"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[2:] == ["–"] * 4 + ["60.0", "50.0", "–", "–"] + ["–"] * 4  # L2 Fast@1 and Fast@1.2 only
    assert "mini2 row" in table1 and "ours (mini2)" not in (tmp_path / "tables" / "table2_fast_p_torch_compile.md").read_text()
    # Table 2's row: the same runs' held-out endpoints judged against torch.compile (their own file)
    compiled = runs.assign(value=runs["value"] / 2)
    compiled.to_csv(tmp_path / "compile_runs.csv", index=False)
    monkeypatch.setattr(build, "MINI2_COMPILE_RUNS_CSV", tmp_path / "compile_runs.csv")
    build.make_tables(tmp_path / "tables")
    table2 = (tmp_path / "tables" / "table2_fast_p_torch_compile.md").read_text()
    line = next(row for row in table2.splitlines() if row.startswith("| ours (mini2)"))
    assert [c.strip() for c in line.strip("|").split("|")][6:8] == ["30.0", "25.0"]
    assert "judged against the compile reference" in table2
