"""Command-line entry points ``drk train`` and ``drk sft`` (wired by ``drk.cli``).

Both take ``--config FILE`` (YAML or JSON; optional) and repeatable ``--set KEY=VALUE`` overrides, and
``--print-config`` to show the resolved configuration without running.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def _parser(prog: str, what: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=what)
    p.add_argument("--config", help="YAML/JSON config file (fields of the config dataclass)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one field, e.g. --set steps=2 --set lora=true (repeatable)")
    p.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    return p


def _resolve(cls, args):
    from drk.train.config import parse_overrides

    overrides = parse_overrides(args.overrides)
    return cls.from_file(args.config, overrides) if args.config else cls.from_dict(overrides)


def main_train(argv: list[str] | None = None) -> int:
    """``drk train``: multi-turn RL (TRLOO/GRPO, PRS/MRS, LoRA or full, HF or vLLM rollouts)."""
    args = _parser("drk train", "Multi-turn RL training of a Triton-kernel policy against drk.gym.").parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from drk.train.config import RLConfig

    try:
        cfg = _resolve(RLConfig, args)
    except ValueError as exc:
        print(f"drk train: {exc}", file=sys.stderr)
        return 2
    if args.print_config:
        print(json.dumps(cfg.to_dict(), indent=2))
        return 0
    from drk.train.api import train

    result = train(cfg)
    print(f"trained {result.steps} steps; checkpoint {result.checkpoint}; log {result.log_path}")
    return 0


def main_sft(argv: list[str] | None = None) -> int:
    """``drk sft``: supervised cold start on multi-turn trajectories (JSONL)."""
    args = _parser("drk sft", "Supervised cold start on multi-turn trajectories with TRL's SFTTrainer.").parse_args(
        argv)
    from drk.train.sft import SFTRunConfig

    try:
        cfg = _resolve(SFTRunConfig, args)
    except ValueError as exc:
        print(f"drk sft: {exc}", file=sys.stderr)
        return 2
    if args.print_config:
        print(json.dumps(cfg.to_dict(), indent=2))
        return 0
    from drk.train.sft import sft

    checkpoint = sft(cfg)
    print(f"sft done; checkpoint {checkpoint}")
    return 0


if __name__ == "__main__":
    sys.exit(main_train())
