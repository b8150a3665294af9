"""``python -m drk.mini2 sft|rl|eval|grid|claims|figures|export|table``: the mini2 policy's cold start, one RL variant,
held-out evaluation; the seeds x variants grid of results/mini2/PLAN.md, its claims table and its figures; what a
verdict table holds.

Settings are a :class:`~drk.mini2.config.Mini2Config`: ``--config FILE`` (YAML/JSON) then ``--set KEY=VALUE``
overrides, e.g. for the partial verdict table (problems 0-12)::

    python -m drk.mini2 sft --set table=results/mini2/verdicts_part1.csv --set train_tasks=0-9 --set out_dir=runs/m2
    python -m drk.mini2 rl --variant grpo --set table=results/mini2/verdicts_part1.csv --set train_tasks=0-9 \\
        --set out_dir=runs/m2 --set steps=50 --set seed=1
    python -m drk.mini2 eval --checkpoint runs/m2/rl/grpo/seed1/final --set table=... --set heldout_tasks=10-12

``sft`` writes ``<out_dir>/sft/seed<seed>/{checkpoint,demos.jsonl,sft_log.jsonl}``; ``rl`` starts from that
checkpoint (or ``--init``) and writes ``<out_dir>/rl/<variant>/seed<seed>/{log.jsonl,episodes.jsonl,final}``;
``eval`` writes ``<label>_records.jsonl`` and ``<label>_summary.csv`` next to the checkpoint (or ``--out``).

The grid (:mod:`drk.mini2.experiment`; resumable: run the same command again to finish it), then the claims table
(:mod:`drk.mini2.claims`) and the figures with bands over seeds (:mod:`drk.figures.mini2`)::

    python -m drk.mini2 grid --out runs/m2grid --seeds 0-4 --settings main,sensitivity --jobs 2 \
        --set table=results/mini2/verdicts_part1.csv --set train_tasks=0-9 --set heldout_tasks=10-12
    python -m drk.mini2 claims --runs runs/m2grid --out results/mini2/claims.csv
    python -m drk.mini2 figures --runs runs/m2grid --out results/mini2/figures
    python -m drk.mini2 export --runs runs/m2grid --out results/mini2/curves   # what the figures read, committed

Table 2's mini2 row: the trloo runs again (training reads the eager table, so they are the same runs), their held-out
evaluation reading the held-out rows measured against torch.compile, then only their endpoints::

    python -m drk.mini2 grid --out runs/m2compile --variants trloo --seeds 0-9 --no-stts --jobs 2 \
        --set heldout_table=results/mini2/verdicts_heldout_compile.csv
    python -m drk.mini2 endpoints --runs runs/m2compile --out results/mini2/heldout_compile_runs.csv

The check that the table is a cache, not a model (:mod:`drk.mini2.live_check`): the same run from the same checkpoint,
once on the table and once judged live by drk.gym (a GPU; no result cache), compared call by call (exit 1 if a
status differs)::

    python -m drk.mini2 live-check --steps 1 --set train_tasks=0-5 --out runs/mini2_live

What a verdict table holds (statuses per program head, and how many Fast@1.2 rows drk's host-time charge decides,
:func:`drk.mini2.verdicts.charge_report`), as JSON::

    python -m drk.mini2 table results/mini2/verdicts.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from drk.mini2.config import SETTINGS, VARIANTS, Mini2Config


def load_config(path: str | None, pairs: list[str]) -> Mini2Config:
    from drk.train.config import load_config_file, parse_overrides

    data = load_config_file(path) if path else {}
    return Mini2Config.from_dict({**data, **parse_overrides(pairs)})


def seeds_spec(spec: str) -> list[int]:
    """``"0-4"`` or ``"0,2,5"`` (or a mix, ``"0-2,7"``) as a list of seeds."""
    seeds: list[int] = []
    for part in spec.split(","):
        lo, _, hi = part.strip().partition("-")
        seeds += list(range(int(lo), int(hi or lo) + 1))
    return seeds


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="Mini2Config as YAML/JSON")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="Mini2Config override")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m drk.mini2", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("sft", "rl", "eval", "grid", "live-check"):
        p = sub.add_parser(name)
        _add_config_args(p)
        if name == "rl":
            p.add_argument("--variant", default="trloo", choices=sorted(VARIANTS))
            p.add_argument("--init", help="starting checkpoint (default: <out_dir>/sft/seed<seed>/checkpoint)")
            p.add_argument("--out", help="run directory (default: <out_dir>/rl/<variant>/seed<seed>)")
        if name == "eval":
            p.add_argument("--checkpoint", required=True)
            p.add_argument("--tasks", help="task spec (default: the config's heldout_tasks)")
            p.add_argument("--context", choices=("vanilla", "best_w"), help="default: the config's eval_context")
            p.add_argument("--turns", type=int, help="default: the config's eval_turns")
            p.add_argument("--label", default=None, help="file prefix (default: eval_<context>_T<turns>)")
            p.add_argument("--out", help="output directory (default: the checkpoint's parent)")
        if name == "live-check":
            p.add_argument("--variant", default="trloo", choices=sorted(VARIANTS))
            p.add_argument("--steps", type=int, default=1, help="RL steps to compare (default 1)")
            p.add_argument("--init", help="starting checkpoint (default: SFT now, into <out>/sft)")
            p.add_argument("--out", default="runs/mini2_live", help="both runs' logs and live_check.json")
            p.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="where drk.gym judges")
            p.add_argument("--workers", type=int, default=None, help="drk.gym.Pool workers (default: its own)")
        if name == "grid":
            p.add_argument("--out", help="the tree's root (default: the config's out_dir)")
            p.add_argument("--variants", default="all", help="comma-separated, or 'all' (default)")
            p.add_argument("--seeds", default="0-4", help="e.g. 0-4 (default) or 0,2,5")
            p.add_argument("--settings", default="main", help="comma-separated of " + ", ".join(SETTINGS))
            p.add_argument("--jobs", type=int, default=1, help="worker processes (one torch thread each)")
            p.add_argument("--no-stts", action="store_true", help="skip the STTS evaluation of the trloo runs")
            p.add_argument("--keep-episodes", action="store_true", help="keep episodes.jsonl (~10 MB a run)")
    claims = sub.add_parser("claims", help="PLAN.md's claims table from a grid's tree")
    claims.add_argument("--runs", required=True, help="the grid's root")
    claims.add_argument("--out", default="results/mini2/claims.csv")
    claims.add_argument("--n-boot", type=int, default=2000, help="problem-bootstrap resamples")
    claims.add_argument("--seed", type=int, default=0, help="seeds the bootstrap")
    endpoints = sub.add_parser("endpoints", help="only the per-run endpoints of a tree (e.g. trloo runs whose "
                               "held-out evaluation read another table)")
    endpoints.add_argument("--runs", required=True, help="the tree's root")
    endpoints.add_argument("--out", required=True)
    endpoints.add_argument("--n-boot", type=int, default=2000, help="problem-bootstrap resamples")
    table = sub.add_parser("table", help="a verdict table's statuses per program head and its charge report (JSON)")
    table.add_argument("path", nargs="?", default="results/mini2/verdicts.csv")
    table.add_argument("--fast", type=float, default=1.2, help="the speedup the charge report counts as fast")
    export = sub.add_parser("export", help="what the figures read from a grid, as small files to commit")
    export.add_argument("--runs", required=True, help="the grid's root")
    export.add_argument("--out", default="results/mini2/curves")
    figures = sub.add_parser("figures", help="the grid's figures with bands over seeds")
    figures.add_argument("--runs", required=True, help="the grid's root")
    figures.add_argument("--out", default="results/mini2/figures")
    figures.add_argument("--setting", default="main")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "export":
            from drk.mini2.runs import export_curves

            for path in export_curves(args.runs, args.out):
                print(f"[mini2 export] -> {path}")
            return 0
        if args.command == "endpoints":
            from drk.mini2.claims import write_runs

            print(f"[mini2 endpoints] -> {write_runs(args.runs, args.out, args.n_boot)}")
            return 0
        if args.command in ("claims", "figures"):
            return _analyse(args)
        if args.command == "table":
            return _table_report(args)
        cfg = load_config(args.config, args.set)
        if args.command == "grid":
            return _grid(args, cfg)
        if args.command == "live-check":
            return _live_check(args, cfg)
        if args.command == "sft":
            from drk.mini2.sft import run_sft

            _, out = run_sft(cfg, progress=True)
            print(f"[mini2 sft] -> {out / 'checkpoint'}")
        elif args.command == "rl":
            from drk.mini2.rl import run_rl

            init = args.init or str(Path(cfg.out_dir) / "sft" / f"seed{cfg.seed}" / "checkpoint")
            _, out = run_rl(cfg, args.variant, init, out_dir=args.out, progress=True)
            print(f"[mini2 rl] -> {out}")
        else:
            import torch

            from drk.mini2.env import resolve_tasks
            from drk.mini2.evaluate import EvalSettings, run_eval
            from drk.mini2.rl import load_table

            torch.set_num_threads(cfg.threads)
            verdicts = load_table(cfg)
            tasks = resolve_tasks(args.tasks or cfg.heldout_tasks, verdicts)
            settings = EvalSettings(samples=cfg.eval_samples, turns=args.turns or cfg.eval_turns,
                                    context=args.context or cfg.eval_context, window=cfg.eval_window,
                                    greedy=cfg.eval_greedy, temperature=cfg.eval_temperature, seed=cfg.seed)
            label = args.label or f"eval_{settings.context}_T{settings.turns}"
            out = args.out or str(Path(args.checkpoint).parent)
            frame = run_eval(args.checkpoint, tasks, verdicts, settings, out, label)
            rows = frame[(frame["kind"] == "fast@p") & frame["p"].isin([1.0, 1.2])]
            for _, r in rows.iterrows():
                print(f"{r['metric']}: {r['value']:.3f} [{r['ci_lo']:.3f}, {r['ci_hi']:.3f}]")
            print(f"[mini2 eval] -> {out}/{label}_summary.csv")
    except (ValueError, KeyError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _grid(args, cfg: Mini2Config) -> int:
    from drk.mini2.experiment import Grid, GridSummary, quiet_worker, run_grid

    variants = tuple(VARIANTS) if args.variants == "all" else tuple(v.strip() for v in args.variants.split(","))
    grid = Grid(cfg, args.out or cfg.out_dir, variants=variants, seeds=tuple(seeds_spec(args.seeds)),
                settings=tuple(s.strip() for s in args.settings.split(",")), stts=not args.no_stts,
                keep_episodes=args.keep_episodes)
    if args.jobs == 1:
        quiet_worker()  # the jobs run in this process
    summary = GridSummary.of(run_grid(grid, args.jobs, progress=True))
    print(f"[mini2 grid] {summary.counts} -> {grid.root}")
    for failed in summary.failures:
        print(f"failed: {failed.job}\n{failed.error}", file=sys.stderr)
    return 1 if summary.failures else 0


def _table_report(args) -> int:
    import json

    from drk.mini2.verdicts import charge_report, load_verdicts, summary

    table = load_verdicts(args.path)
    rows = list(table)
    print(json.dumps({"rows": len(rows), "git_sha": table.meta.get("git_sha"), "note": table.meta.get("note"),
                      "statuses": summary(rows), f"charge_report@{args.fast:g}": charge_report(rows, args.fast)},
                     indent=1))
    return 0


def _live_check(args, cfg: Mini2Config) -> int:
    """The table-driven run and the live one (no result cache: every verdict judged now), compared."""
    import json

    from drk.gym import EvalConfig, Pool
    from drk.mini2.live_check import live_check
    from drk.mini2.rl import load_table
    from drk.mini2.sft import run_sft
    from drk.mini2.verdicts import LiveVerdicts

    table = load_table(cfg)
    init = args.init or run_sft(cfg, verdicts=table, out_dir=Path(args.out) / "sft", progress=True)[0]
    # the table's measurement config (its sidecar), so the live judge measures as the table did
    config = EvalConfig.from_dict(table.meta["eval_config"]) if table.meta.get("eval_config") else None
    live = LiveVerdicts(Pool(device=args.device, workers=args.workers, config=config, progress=False), config)
    report = live_check(cfg, args.variant, init, live, steps=args.steps, out_dir=args.out, table=table)
    print(json.dumps({k: v for k, v in report.to_dict().items() if k != "disagreements"}, indent=1))
    for row in report.disagreements:
        print(f"status differs: {row}", file=sys.stderr)
    print(f"[mini2 live-check] {'reproduced' if report.reproduced else 'NOT reproduced'} -> {args.out}/live_check.json")
    return 0 if report.reproduced else 1


def _analyse(args) -> int:
    if args.command == "claims":
        import pandas as pd

        from drk.mini2.claims import count_tested, write_claims

        paths = write_claims(args.runs, args.out, n_boot=args.n_boot, seed=args.seed)
        table = pd.read_csv(paths[0])
        with pd.option_context("display.width", 200, "display.max_columns", 12):
            print(table[["setting", "claim", "metric", "n_seeds", "effect", "ci_lo", "ci_hi", "verdict",
                         "reported_verdict"]])
        print(f"{count_tested(table)} claim rows tested in the main setting, no correction for multiple comparisons")
        print(f"[mini2 claims] -> {', '.join(str(p) for p in paths)}")
    else:
        from drk.figures.build import make_mini2_figures

        paths = make_mini2_figures(args.out, args.runs, args.setting)
        print(f"[mini2 figures] {len(paths)} files -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
