"""``python -m drk.mini {data,policy,sft,rl,all}``: the stages of the mini experiment (see drk.mini.experiment)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import replace

from drk.mini.experiment import (
    DEFAULT_VARIANTS,
    MiniConfig,
    make_data,
    make_policy,
    run_all,
    run_sft,
    run_variant,
)


def load_config(path: str | None, args: argparse.Namespace) -> MiniConfig:
    from drk.train.config import load_config_file

    cfg = MiniConfig.from_dict(load_config_file(path)) if path else MiniConfig()
    for name in ("device", "out_dir", "results_dir", "rl_minutes", "rl_steps"):
        value = getattr(args, name, None)
        if value is not None:
            cfg = replace(cfg, **{name: value})
    return cfg


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m drk.mini", description=__doc__)
    parser.add_argument("stage", choices=["data", "policy", "sft", "rl", "all"])
    parser.add_argument("--config", help="YAML/JSON of MiniConfig fields (default: the committed settings)")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--out-dir", dest="out_dir")
    parser.add_argument("--results-dir", dest="results_dir")
    parser.add_argument("--rl-minutes", dest="rl_minutes", type=float)
    parser.add_argument("--rl-steps", dest="rl_steps", type=int)
    parser.add_argument("--variant", help="rl: the ablation label (drk.mini.TRAINING_RUNS)")
    parser.add_argument("--variants", nargs="+", default=list(DEFAULT_VARIANTS), help="all: which ablations")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0], help="all: seeds per ablation")
    parser.add_argument("--seed", type=int, default=0, help="rl: the run's seed")
    parser.add_argument("--parallel", type=int, default=1, help="all: RL runs at once (they share the GPU)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["data", "policy", "sft"],
                        help="all: stages whose outputs already exist")
    args = parser.parse_args(argv)
    cfg = load_config(args.config, args)
    start = time.monotonic()
    if args.stage == "rl":
        if not args.variant:
            parser.error("rl needs --variant")
        print(f"[drk.mini] wrote {run_variant(cfg, args.variant, args.seed)}", flush=True)
        return 0
    if args.stage == "all":
        return 1 if run_all(cfg, variants=args.variants, seeds=args.seeds, parallel=args.parallel,
                            skip=tuple(args.skip)) else 0
    stage = {"data": make_data, "policy": make_policy, "sft": run_sft}[args.stage]
    print(f"[drk.mini] {args.stage} -> {stage(cfg)} ({time.monotonic() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
