"""The ``drk`` command line: ``drk eval``, ``drk train``, ``drk sft``, ``drk reproduce``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence


def _eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    from drk.gym import EvalConfig, Problem, ProblemError, evaluate
    from drk.gym.wire import json_safe

    for label, path in (("problem", args.problem), ("candidate", args.candidate)):
        if Path(path).is_dir():
            print(f"drk eval: the {label} {path!r} is a directory; give a file", file=sys.stderr)
            return 2
    try:
        problem = Problem.from_file(args.problem)
        with open(args.candidate) as handle:
            candidate = handle.read()
        config = EvalConfig(timeout_s=args.timeout_s, reference_mode=args.reference_mode,
                            timing_policy=args.timing_policy, seed=args.seed)
        result = evaluate(problem, candidate, device=args.device, config=config)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        print(f"drk eval: {exc}", file=sys.stderr)
        return 2
    except ProblemError as exc:  # the problem's fault, not the candidate's: no traceback, no verdict
        print(f"drk eval: problem error: {str(exc)[-1500:]}", file=sys.stderr)
        return 3
    if args.json:
        print(json.dumps(json_safe(result.to_dict()), indent=2, allow_nan=False))
    else:
        print(f"status: {result.status}" + (f"  hack reasons: {', '.join(result.hack_reasons)}" if result.hacked else ""))
        print(result.feedback)
    return 0


def _delegate(module: str, function: str):
    def run(args: argparse.Namespace) -> int:
        import importlib

        return int(getattr(importlib.import_module(module), function)(args.rest) or 0)

    return run


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="drk", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="evaluate one candidate against one problem")
    ev.add_argument("problem", help="KernelBench-format problem file")
    ev.add_argument("candidate", help="candidate module or LLM reply (the last ```python block is used)")
    ev.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    ev.add_argument("--json", action="store_true", help="print the whole result as JSON")
    ev.add_argument("--timeout-s", type=float, default=180.0)
    ev.add_argument("--reference-mode", choices=["eager", "compile"], default="eager")
    ev.add_argument("--timing-policy", choices=["drk", "authors"], default="drk")
    ev.add_argument("--seed", type=int, default=0)
    ev.set_defaults(func=_eval)
    for name, module, function, text in (
        ("train", "drk.train.cli", "main_train", "multi-turn RL training (see drk train --help)"),
        ("sft", "drk.train.cli", "main_sft", "cold-start supervised fine-tuning on stored trajectories"),
        ("reproduce", "drk.reproduce", "main", "regenerate every figure and table (runs the notebooks)"),
    ):
        cmd = sub.add_parser(name, help=text, add_help=False)
        cmd.add_argument("rest", nargs=argparse.REMAINDER)
        cmd.set_defaults(func=_delegate(module, function))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
