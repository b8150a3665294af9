"""Writing every figure and table to a folder: the I/O layer around the ``plot_*`` and table functions.

Each ``make_*`` loads its data (paper CSVs, and our results when given), plots, and saves PNG + PDF + a caption
naming the data source; it returns the written paths. Figures from our training runs are made only when the run
data exists. Layout of an ``ours`` results folder (all optional):

    ours/eval/<label>.jsonl          evaluation records (drk.eval.evaluate_policy); <label> is the table row name
    ours/train/<method>/**/log.jsonl drk.train logs (one wide row per step); <method> labels the run's curve
    ours/training_log.jsonl          or: an already tidy training log, schema in drk.figures.training (or .parquet)
    ours/profiling_cases.csv         drk.eval.profiling_cases.measure_profiling_cases output
    ours/stts/<context>.jsonl        STTS evaluation records, one file per context strategy
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from drk.data import paper
from drk.figures.architecture import plot_architecture
from drk.figures.hacking import fig2_from_training_log, plot_hacking_check_curves, plot_hacking_ratio
from drk.figures.overview import FIG1_MODELS, plot_fast_p_bars
from drk.figures.profiling import plot_profiling_examples
from drk.figures.scaling import plot_stts
from drk.figures.style import save_figure
from drk.figures.tables import build_fast_p_table, frame_to_markdown, table_to_latex, table_to_markdown
from drk.figures.training import (
    DYNAMICS_METHODS,
    FIG4_METHODS,
    PRS_METHODS,
    methods_for,
    plot_fast_p_vs_step,
    plot_fast_p_vs_turn,
    plot_prs_ablation,
    plot_training_panels,
    tidy_training_log,
)
from drk.provenance import caption_stamp, display_path

TABLE_STEMS = {"eager": "table1_fast_p_eager", "compile": "table2_fast_p_torch_compile"}


def _save(fig, out_dir, stem: str, caption: str, data: pd.DataFrame | None = None) -> list[Path]:
    """Save the figure with its caption (stamped with the drk version and git SHA) and its data as CSV."""
    import matplotlib.pyplot as plt

    paths = save_figure(fig, out_dir, stem, caption=caption + caption_stamp())
    plt.close(fig)
    if data is not None:
        data.to_csv(Path(out_dir) / f"{stem}.csv", index=False)
        paths.append(Path(out_dir) / f"{stem}.csv")
    return paths


def load_training_log(ours: str | Path | None) -> pd.DataFrame | None:
    """Our training runs in the tidy schema of :mod:`drk.figures.training`, or None when there are none.

    Reads ``ours/training_log.jsonl`` / ``.parquet`` (already tidy) and every trainer log
    ``ours/train/<method>/**/log.jsonl`` (``drk.train``'s wide rows; the run id is the folder path).
    """
    if ours is None:
        return None
    root, frames = Path(ours), []
    if (root / "training_log.parquet").is_file():
        frames.append(pd.read_parquet(root / "training_log.parquet"))
    if (root / "training_log.jsonl").is_file():
        frames.append(pd.read_json(root / "training_log.jsonl", lines=True))
    for path in sorted((root / "train").glob("*/**/log.jsonl")):
        relative = path.parent.relative_to(root / "train")
        rows = pd.read_json(path, lines=True)
        frames.append(tidy_training_log(rows, method=relative.parts[0], run=str(relative)))
    return pd.concat(frames, ignore_index=True) if frames else None


def our_fast_p_rows(ours: str | Path | None, reference_mode: str, turn: int | None = 3) -> pd.DataFrame | None:
    """Table rows of every ``ours/eval/<label>.jsonl`` evaluated with ``reference_mode`` (turn 3 by default)."""
    from drk.eval.records import load_records
    from drk.eval.summary import fast_p_long, records_frame

    files = sorted((Path(ours) / "eval").glob("*.jsonl")) if ours is not None else []
    frames = []
    for path in files:
        records = records_frame(load_records(path))
        records = records[records["reference_mode"] == reference_mode]
        if len(records):
            last = min(turn, int(records["turn"].max())) if turn is not None else None
            untimed = records["speedup"].isna().all()  # a CPU run: Fast@p is 0 by construction, say so
            label = path.stem + (" [no GPU timing]" if untimed else "")
            frames.append(fast_p_long(records, model=label, turn=last))
    return pd.concat(frames, ignore_index=True) if frames else None


#: The committed mini2 results (issue 12): its verdict table, and the grid's per-run endpoints
#: (``python -m drk.mini2 claims`` writes them beside the claims table).
MINI2_RESULTS = Path(__file__).resolve().parents[2] / "results" / "mini2"
MINI2_RUNS_CSV = MINI2_RESULTS / "claims_runs.csv"
#: The same trloo runs' held-out endpoints judged by verdicts measured against torch.compile'd references
#: (``heldout_table``; ``python -m drk.mini2 endpoints`` writes them): Table 2's mini2 row.
MINI2_COMPILE_RUNS_CSV = MINI2_RESULTS / "heldout_compile_runs.csv"
#: Where each table's mini2 row comes from, by reference mode.
MINI2_ROW_SOURCES = {"eager": "results/mini2/claims_runs.csv (python -m drk.mini2 claims)",
                     "compile": "results/mini2/heldout_compile_runs.csv: the same runs repeated with their held-out "
                                "evaluation reading results/mini2/verdicts_heldout_compile.csv (python -m drk.mini2 "
                                "endpoints)"}


def mini2_fast_p_rows(reference_mode: str, runs_csv: str | Path | None = None, variant: str = "trloo",
                      setting: str = "main") -> pd.DataFrame | None:
    """Table rows of the trained mini2 policies: held-out Fast@p at the last training turn, averaged over the
    endpoint window (PLAN.md's primary endpoint, :mod:`drk.mini2.endpoints`) and then over seeds. mini2's problems
    are synthetic chains of 3-5 ops, like KernelBench's level 2, so the row fills the L2 cells only (Fast@1 and
    Fast@1.2, the thresholds mini2 records). Table 1 (eager) reads the grid's endpoints (:data:`MINI2_RUNS_CSV`);
    Table 2 (compile) the same runs whose held-out evaluation read verdicts measured against torch.compile
    (:data:`MINI2_COMPILE_RUNS_CSV`). ``None`` when ``runs_csv`` (default: the mode's file) is not there."""
    if reference_mode not in ("eager", "compile"):
        return None
    runs_csv = Path(runs_csv or (MINI2_RUNS_CSV if reference_mode == "eager" else MINI2_COMPILE_RUNS_CSV))
    if not runs_csv.is_file():
        return None
    runs = pd.read_csv(runs_csv)
    runs = runs[(runs["setting"] == setting) & (runs["variant"] == variant)]
    rows, last_turn = [], runs_turns(runs)
    for metric, sub in runs.groupby("metric"):
        match = re.fullmatch(r"fast@([\d.]+)/turn(\d+)", str(metric))
        if match and int(match.group(2)) == last_turn:
            rows.append({"model": f"mini2 {variant} policy ({sub['seed'].nunique()} seeds, synthetic L2-like tasks)",
                         "level": 2, "p": float(match.group(1)), "fast_p": float(sub["value"].mean()),
                         "reference_mode": reference_mode, "source": "ours (mini2)"})
    return pd.DataFrame(rows) if rows else None


def runs_turns(runs: pd.DataFrame) -> int:
    """The last training turn among a runs table's ``fast@p/turn<T>`` metrics."""
    turns = runs["metric"].astype(str).str.extract(r"^fast@[\d.]+/turn(\d+)$", expand=False).dropna()
    return int(turns.astype(int).max()) if len(turns) else 0


def make_fig1(out_dir) -> list[Path]:
    """Figure 1 from Table 1."""
    data = paper.load_fast_p("eager")
    fig, _ = plot_fast_p_bars(data.frame)
    return _save(fig, out_dir, "fig1_fast_p_overview",
                 f"Figure 1: Fast@1.2 of {', '.join(FIG1_MODELS)} per KernelBench level. Data: paper Table 1 "
                 f"(drk/data/paper/table1_fast_p_eager.csv: {data.source})",
                 data.frame[data.frame["model"].isin(FIG1_MODELS)])


#: The oracle row's name in Tables 1 and 2: drk's bundled hand-written solutions, one sample per problem.
ORACLE_MODEL = "bundled solutions (oracle)"


def load_notes() -> list[str]:
    """The ``#`` header lines of ``drk/problems/gpu_results.csv`` (GPU, date, commit)."""
    from drk.problems import load_gpu_results

    return list(load_gpu_results().attrs.get("notes", []))


def mode_notes(reference_mode: str) -> list[str]:
    """The header lines of ``drk/problems/gpu_results.csv`` that a table against ``reference_mode`` rests on: the
    first (the GPU) and those of the drk timer's pass against that reference (each pass has its own date and
    commit)."""
    notes = load_notes()
    return notes[:1] + [n for n in notes[1:] if n.startswith(f"drk timing policy, {reference_mode} reference")]


def oracle_fast_p_rows(reference_mode: str, ps=(1.0, 1.2, 1.5, 2.0)) -> pd.DataFrame | None:
    """Fast@p per level of the bundled *fused* solutions as measured on a GPU (``drk/problems/gpu_results.csv``,
    ``drk`` timer): an upper reference for the table — what a policy that always wrote our solution would score on
    our bundled problems (not KernelBench's task set). ``None`` for a reference mode that was not measured (rows
    without a ``reference_mode`` column were measured against the eager reference)."""
    from drk.metrics import fast_p
    from drk.problems import GPU_RESULTS, load_gpu_results

    if not GPU_RESULTS.is_file():
        return None
    frame = load_gpu_results()
    modes = frame["reference_mode"] if "reference_mode" in frame else pd.Series("eager", index=frame.index)
    fused = frame[(frame["kind"] == "fused") & (frame["timing_policy"] == "drk") & (modes == reference_mode)]
    rows = []
    for level, sub in fused.groupby("level"):
        records = [{"problem": label, "sample": 0, "turn": 1, "correct": bool(c), "hacked": bool(h),
                    "speedup": None if pd.isna(sp) else float(sp)}
                   for label, c, h, sp in zip(sub["label"], sub["correct"], sub["hacked"], sub["speedup"])]
        rows += [{"model": ORACLE_MODEL, "level": int(level), "p": p, "fast_p": fast_p(records, p),
                  "reference_mode": reference_mode, "source": "ours (oracle)"} for p in ps]
    return pd.DataFrame(rows) if rows else None


def make_tables(out_dir, ours=None) -> list[Path]:
    """Tables 1 and 2 as Markdown and LaTeX: paper rows, the bundled solutions' oracle row (where measured), then
    ours."""
    out, paths = Path(out_dir), []
    out.mkdir(parents=True, exist_ok=True)
    for mode, stem in TABLE_STEMS.items():
        data = paper.load_fast_p(mode)
        oracle, mini2 = oracle_fast_p_rows(mode), mini2_fast_p_rows(mode)
        extra = [f for f in (oracle, mini2, our_fast_p_rows(ours, mode)) if f is not None]
        table = build_fast_p_table(data.frame, pd.concat(extra, ignore_index=True) if extra else None)
        note = f"Fast@p (%) per level, {mode} reference. Paper rows: {data.source}"
        if oracle is not None:
            note += (f" Oracle row: drk's bundled fused solutions on our bundled problems (not KernelBench's task "
                     f"set), one sample each, drk timer, {mode} reference, from drk/problems/gpu_results.csv "
                     f"({'; '.join(n.rstrip('.') for n in mode_notes(mode))}).")
        else:
            note += " No oracle row: the bundled solutions were not measured against this reference mode."
        if mini2 is not None:
            note += (" mini2 row: the trained mini2 policies' held-out Fast@p at turn 3 (the endpoint window's mean, "
                     f"then the mean over seeds) on 8 synthetic held-out problems, not KernelBench, judged against "
                     f"the {mode} reference; from {MINI2_ROW_SOURCES[mode]}.")
        if ours is not None:
            note += f" Our rows: {display_path(Path(ours) / 'eval')} (turn 3 records)."
        (out / f"{stem}.md").write_text(f"<!-- {note} -->\n" + table_to_markdown(table))
        (out / f"{stem}.tex").write_text(f"% {note}\n" + table_to_latex(table))
        paths += [out / f"{stem}.md", out / f"{stem}.tex"]
    return paths


def make_fig2_left(out_dir, ours=None) -> list[Path]:
    """Figure 2 (left): the digitised paper curves, plus our TRLOO / no-hack-check runs when logged."""
    data = paper.load_fig2_curves()
    log = load_training_log(ours)
    frames = [data.frame] + ([fig2_from_training_log(log)] if log is not None else [])
    frame = pd.concat(frames, ignore_index=True)
    fig, _ = plot_hacking_check_curves(frame)
    caption = f"Figure 2 (left): Fast@p vs RL step with and without the hacking check. Paper: {data.source}"
    if log is not None:
        caption += f" Ours (dashed): methods trloo / no_hack_check of {display_path(ours)} (train/ logs)."
    return _save(fig, out_dir, "fig2_left_hacking_check", caption, frame)


#: The mini2 problem whose H200 decoy / lazy / fused verdicts Figure 10 shows (the first of the table, not chosen by
#: its outcome).
FIG10_MINI2_PROBLEM = "m2_00_GELU_SubMean_Tanh_Bias"


def h200_profiling_cases(mini2_table=None) -> pd.DataFrame:
    """Figure 10's cases measured on our H200 and committed: the bundled suite's lazy and fused solutions of
    ``L2/01_Matmul_Bias_ReLU`` (``drk/problems/gpu_results.csv``) and the decoy / lazy / best fused programs of one
    mini2 problem (``results/mini2/verdicts.csv``, :data:`FIG10_MINI2_PROBLEM`), each with its own ``source``."""
    from drk.mini2.verdicts import load_verdicts, profiling_cases
    from drk.problems import suite_profiling_cases

    table = mini2_table or MINI2_RESULTS / "verdicts.csv"
    suite = pd.DataFrame(suite_profiling_cases()).assign(source="ours H200: suite L2/01")
    mini2 = pd.DataFrame(profiling_cases(load_verdicts(table, check_sources=False), FIG10_MINI2_PROBLEM))
    return pd.concat([suite, mini2.assign(source="ours H200: mini2 m2_00")], ignore_index=True)


def make_fig10(out_dir, ours=None) -> list[Path]:
    """Figure 2 (right) / Figure 10: profiling ratio and speedup, the paper's cases beside our committed H200 ones
    (:func:`h200_profiling_cases`) and ``ours`` when measured (notebook 04's, on this machine)."""
    data = paper.load_fig10_examples()
    ours_csv = Path(ours) / "profiling_cases.csv" if ours is not None else None
    frames = [data.frame, h200_profiling_cases()]
    if ours_csv is not None and ours_csv.is_file():
        frames.append(pd.read_csv(ours_csv).assign(source="ours: this run"))
    frame = pd.concat(frames, ignore_index=True)
    fig, _ = plot_profiling_examples(frame)
    caption = (f"Figure 10 / 2 (right): profiling ratio (log axis) and speedup per candidate. Paper: {data.source} "
               "Ours H200: drk/problems/gpu_results.csv (bundled L2/01 lazy and fused solutions, drk timing) and "
               f"results/mini2/verdicts.csv ({FIG10_MINI2_PROBLEM}: DECOY, LAZY and its fastest FUSE program).")
    if len(frames) > 2:
        caption += f" Ours, this run: {display_path(ours_csv)} (drk.gym on our bundled decoy/lazy/fused candidates)."
    return _save(fig, out_dir, "fig10_profiling_examples", caption, frame)


def make_fig3(out_dir) -> list[Path]:
    """Figure 3: our environment's architecture (no data: drawn from drk.figures.architecture.OUR_ARCHITECTURE)."""
    fig, _ = plot_architecture()
    return _save(fig, out_dir, "fig3_architecture",
                 "Figure 3: drk.gym, our KernelGYM: clients, pool, per-GPU workers, isolated evaluation stages. "
                 "Drawn from drk.figures.architecture.OUR_ARCHITECTURE (no measured data).")


def make_training_figures(out_dir, ours) -> list[Path]:
    """Figures 4, 5/7, 8 and 9 from ``ours/training_log``; nothing when there is no log."""
    log = load_training_log(ours)
    if log is None:
        return []
    source = f"Data: our scaled-down runs in {display_path(ours)} (train/<method>/**/log.jsonl, training_log.jsonl)."
    made = []
    for stem, plot, title, preferred in (
        ("fig4_fast_p_vs_step", plot_fast_p_vs_step,
         "Figure 4 (left): Fast@1 at the last turn (3 in the paper) vs RL step per method.", FIG4_METHODS),
        ("fig4_fast_p_vs_turn", plot_fast_p_vs_turn, "Figure 4 (right): Fast@1 vs turn at the last step.",
         FIG4_METHODS),
        ("fig5_7_training_dynamics", plot_training_panels,
         "Figures 5/7: Fast@1.2, entropy, grad norm, perplexities vs RL step.", DYNAMICS_METHODS),
        ("fig8_hacking_ratio", plot_hacking_ratio, "Figure 8: hacking ratio of rollouts vs RL step.", FIG4_METHODS),
        ("fig9_prs", plot_prs_ablation, "Figure 9: PRS soft vs hard vs none.", PRS_METHODS),
    ):
        methods = methods_for(log, preferred) if preferred else None
        fig, _ = plot(log, methods=methods) if methods else plot(log)
        made += _save(fig, out_dir, stem, f"{title} {source}")
    return made


def make_fig6(out_dir, ours, stem: str = "fig6_stts") -> list[Path]:
    """Figure 6 from ``ours/stts/*.jsonl`` as ``<stem>.*`` (notebook 04 names its own); nothing when absent."""
    from drk.eval.records import load_records
    from drk.eval.summary import stts_curves

    files = sorted((Path(ours) / "stts").glob("*.jsonl")) if ours is not None else []
    if not files:
        return []
    records = [load_records(f) for f in files]
    untimed = all(r.speedup is None for recs in records for r in recs)
    kind = "correct" if untimed else "fast@p"  # without GPU timing Fast@p is 0: show the correct rate instead
    curves = pd.concat([stts_curves(recs, kind=kind) for recs in records], ignore_index=True)
    fig, _ = plot_stts(curves, kind=kind)
    what = "correct rate (no GPU timing in these records)" if untimed else "Fast@1.2"
    return _save(fig, out_dir, stem, f"Figure 6: STTS, {what} vs turn, last turn and best of history. "
                 f"Data: {', '.join(display_path(f) for f in files)} (drk.eval.summary.stts_curves).", curves)


def make_timing_policy_table(out_dir) -> list[Path]:
    """``table_timing_policy.md/.csv``: Fast@p of our bundled solutions on a GPU under our timer vs the paper code's."""
    from drk.problems import GPU_RESULTS, load_gpu_results, timing_policy_fast_p

    if not GPU_RESULTS.is_file():
        return []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = load_gpu_results(reference_mode="eager")  # both policies were measured against the eager reference
    table = timing_policy_fast_p(results)
    table.to_csv(out / "table_timing_policy.csv", index=False)
    shown = table.assign(**{c: (100 * table[c]).round(1) for c in table.columns if c.startswith("Fast@")})
    note = ("Fast@p (%) of our bundled solutions, each timed under the drk policy (L2 flush, rotating inputs, "
            "medians) and the authors' (warm, same inputs, mean of 100). Data: drk/problems/gpu_results.csv ("
            + " ".join(results.attrs["notes"]) + ").")  # every note: the policies' passes may differ in date
    (out / "table_timing_policy.md").write_text(f"<!-- {note} -->\n" + frame_to_markdown(shown, decimals=1))
    return [out / "table_timing_policy.md", out / "table_timing_policy.csv"]


def make_mini_summary(out_dir, mini_dir) -> list[Path]:
    """``table_mini_summary.md/.csv``: per mini run, its steps, start vs end metrics and held-out correct rate."""
    from drk.mini.summary import summarize

    if mini_dir is None or not any(Path(mini_dir).glob("train/*/seed*/log.jsonl")):
        return []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = summarize(mini_dir)
    table.to_csv(out / "table_mini_summary.csv", index=False)
    shown = table.rename(columns=lambda c: c.replace("gym/", "").replace("rl/", ""))
    note = (f"Mini Dr. Kernel runs of {display_path(mini_dir)} (drk.mini.summary.summarize): rates at the first RL step "
            f"and over the last 3 steps, training problems; correct_rate and fast@p: turn 1; hacking_ratio and "
            f"compile_error_rate: both turns; held-out: share of correct turns.")
    (out / "table_mini_summary.md").write_text(f"<!-- {note} -->\n" + frame_to_markdown(shown))
    return [out / "table_mini_summary.md", out / "table_mini_summary.csv"]


def make_mini2_figures(out_dir, runs_dir, setting: str = "main") -> list[Path]:
    """mini2's figures with bands over seeds (:mod:`drk.figures.mini2`) from a grid's tree or its export
    (:mod:`drk.mini2.runs`; the committed ``results/mini2/curves``), as ``mini2_<setting>_*``; nothing when
    ``runs_dir`` is None or has no finished run."""
    from drk.figures import mini2
    from drk.mini2.runs import load_stts, load_training

    if runs_dir is None or not Path(runs_dir).is_dir():
        return []
    log, stts = load_training(runs_dir, setting), load_stts(runs_dir, setting)
    source = (f"Mean over seeds, band: 95 % t-interval of the mean. Data: {display_path(runs_dir)}, setting "
              f"{setting} (drk.mini2.runs).")
    made = []
    for stem, plot, title in (
        ("estimators", mini2.plot_estimators, "TRLOO vs GRPO: training reward and held-out Fast@1.2 vs RL step."),
        ("hacking_check", mini2.plot_hacking_check, "With vs without the hacking check (Figs 2 left, 8)."),
        ("turns", mini2.plot_turns, "Multi- vs single-turn training, gamma = 1 vs 0 (Fig 4)."),
        ("mrs", mini2.plot_mrs, "MRS under rollout/trainer mismatches (Figs 5/7)."),
        ("prs", mini2.plot_prs, "PR reward and PRS soft/hard: Fast@1.2 and mean PR (Fig 9)."),
    ):
        if not log.empty:
            fig, _ = plot(log)
            made += _save(fig, out_dir, f"mini2_{setting}_{stem}", f"{title} {source}")
    if not stts.empty:
        fig, _ = mini2.plot_stts_seeds(stts)
        made += _save(fig, out_dir, f"mini2_{setting}_stts", "STTS on the trloo checkpoints: best-of-history "
                      f"Fast@1.2 vs turn, vanilla vs best-w (w = 4) (Fig 6). {source}", stts)
    return made


def make_all(out_dir, ours=None, training=None) -> list[Path]:
    """Every figure and table that the available data allows; returns the written paths.

    ``ours`` holds our evaluation records, STTS and profiling cases; ``training`` our training logs in the same
    layout (default: ``ours``), e.g. the committed mini runs ``results/mini``.
    """
    training = training if training is not None else ours
    return (make_fig1(out_dir) + make_tables(out_dir, ours) + make_fig2_left(out_dir, training)
            + make_fig10(out_dir, ours) + make_fig3(out_dir) + make_training_figures(out_dir, training)
            + make_fig6(out_dir, ours) + make_mini_summary(out_dir, training) + make_timing_policy_table(out_dir))
