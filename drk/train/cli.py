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


def _main(prog: str, description: str, config_cls, run, argv: list[str] | None) -> int:
    """Parse, validate (bad config: exit 2 with the reason), optionally print the config, then run."""
    args = _parser(prog, description).parse_args(argv)
    try:
        cfg = _resolve(config_cls, args)
    except ValueError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    if args.print_config:
        print(json.dumps(cfg.to_dict(), indent=2))
        return 0
    print(run(cfg))
    return 0


def main_train(argv: list[str] | None = None) -> int:
    """``drk train``: multi-turn RL (TRLOO/GRPO, PRS/MRS, LoRA or full, HF or vLLM rollouts)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from drk.train.api import train
    from drk.train.config import RLConfig

    def run(cfg: RLConfig) -> str:
        result = train(cfg)
        return f"trained {result.steps} steps; checkpoint {result.checkpoint}; log {result.log_path}"

    return _main("drk train", "Multi-turn RL training of a Triton-kernel policy against drk.gym.", RLConfig, run,
                 argv)


def main_sft(argv: list[str] | None = None) -> int:
    """``drk sft``: supervised cold start on multi-turn trajectories (JSONL)."""
    from drk.train.sft import SFTRunConfig, sft

    return _main("drk sft", "Supervised cold start on multi-turn trajectories with TRL's SFTTrainer.", SFTRunConfig,
                 lambda cfg: f"sft done; checkpoint {sft(cfg)}", argv)


if __name__ == "__main__":
    sys.exit(main_train())
