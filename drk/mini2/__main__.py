"""``python -m drk.mini2 sft|rl|eval``: the mini2 policy's cold start, one RL variant, held-out evaluation.

Settings are a :class:`~drk.mini2.config.Mini2Config`: ``--config FILE`` (YAML/JSON) then ``--set KEY=VALUE``
overrides, e.g. for the partial verdict table (problems 0-12)::

    python -m drk.mini2 sft --set table=results/mini2/verdicts_part1.csv --set train_tasks=0-9 --set out_dir=runs/m2
    python -m drk.mini2 rl --variant grpo --set table=results/mini2/verdicts_part1.csv --set train_tasks=0-9 \\
        --set out_dir=runs/m2 --set steps=50 --set seed=1
    python -m drk.mini2 eval --checkpoint runs/m2/rl/grpo/seed1/final --set table=... --set heldout_tasks=10-12

``sft`` writes ``<out_dir>/sft/seed<seed>/{checkpoint,demos.jsonl,sft_log.jsonl}``; ``rl`` starts from that
checkpoint (or ``--init``) and writes ``<out_dir>/rl/<variant>/seed<seed>/{log.jsonl,episodes.jsonl,final}``;
``eval`` writes ``<label>_records.jsonl`` and ``<label>_summary.csv`` next to the checkpoint (or ``--out``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from drk.mini2.config import VARIANTS, Mini2Config


def load_config(path: str | None, pairs: list[str]) -> Mini2Config:
    from drk.train.config import load_config_file, parse_overrides

    data = load_config_file(path) if path else {}
    return Mini2Config.from_dict({**data, **parse_overrides(pairs)})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m drk.mini2", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("sft", "rl", "eval"):
        p = sub.add_parser(name)
        p.add_argument("--config", help="Mini2Config as YAML/JSON")
        p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="Mini2Config override")
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
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config, args.set)
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


if __name__ == "__main__":
    sys.exit(main())
