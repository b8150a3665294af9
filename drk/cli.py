"""The ``drk`` command line: ``drk eval``, ``drk train``, ``drk sft``, ``drk reproduce``, ``drk serve``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drk.gym import EvalConfig


def _eval_config(args: argparse.Namespace) -> EvalConfig:
    """The evaluation settings both forms take from the command line."""
    from drk.gym import EvalConfig

    return EvalConfig(timeout_s=args.timeout_s, reference_mode=args.reference_mode,
                      timing_policy=args.timing_policy, seed=args.seed)


def _eval(args: argparse.Namespace) -> int:
    """``drk eval``: one candidate file, or a batch when CANDIDATES is a JSONL/Parquet file or a folder."""
    from pathlib import Path

    from drk.eval.batch import is_batch_spec
    from drk.gym import Problem, ProblemError, evaluate
    from drk.gym.wire import json_safe

    if is_batch_spec(args.candidate):
        return _eval_batch(args)
    if args.out:
        print("drk eval: --out is for a batch (CANDIDATES a .jsonl/.parquet file or a folder)", file=sys.stderr)
        return 2
    for label, path in (("problem", args.problem), ("candidate", args.candidate)):
        if Path(path).is_dir():
            print(f"drk eval: the {label} {path!r} is a directory; give a file", file=sys.stderr)
            return 2
    try:
        problem = Problem.from_file(args.problem)
        with open(args.candidate) as handle:
            candidate = handle.read()
        from drk.gym.warm import shared_runners

        shared_runners().spares = 0  # one evaluation: no runner to start ahead for a next one
        result = evaluate(problem, candidate, device=args.device, config=_eval_config(args))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        print(f"drk eval: {terminal_safe(str(exc))}", file=sys.stderr)
        return 2
    except ProblemError as exc:  # the problem's fault, not the candidate's: no traceback, no verdict
        print(f"drk eval: problem error: {terminal_safe(str(exc)[-1500:])}", file=sys.stderr)
        return 3
    if args.json:
        print(json.dumps(json_safe(result.to_dict()), indent=2, allow_nan=False))
    else:
        print(f"status: {result.status}" + (f"  hack reasons: {', '.join(result.hack_reasons)}" if result.hacked else ""))
        print(terminal_safe(result.feedback))
    return 0


#: Bidirectional-text controls: they reorder how a terminal shows the characters after them.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


def terminal_safe(text: str) -> str:
    """``text`` with control characters (but newline and tab) and bidi controls shown as escapes.

    Feedback quotes the candidate's own error text: printed raw, its ANSI/OSC escapes could redraw the line to read
    ``status: correct``, or set the terminal's title and clipboard (attacker review, 2026-12-02)."""
    import unicodedata

    return "".join(
        ch if ch in "\n\t" or (unicodedata.category(ch) != "Cc" and ch not in _BIDI_CONTROLS)
        else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _eval_batch(args: argparse.Namespace) -> int:
    """Judge every ``{problem, reply}`` row through a cached ``Pool``; write the records, print a Fast@p summary.

    Bad arguments (unreadable problems or candidates) exit 2 before anything runs; a row that cannot be judged
    is an error record, never a crash, so a long batch is not lost to one bad row.
    """
    from drk.eval import batch
    from drk.gym import Pool, load_problems
    from drk.gym.wire import json_safe

    if not args.out:
        print("drk eval: a batch needs --out results.parquet (or .jsonl)", file=sys.stderr)
        return 2
    try:
        batch.check_output_path(args.out)
        columns = _parse_columns(args.columns)
        problems = load_problems(args.problem, columns=columns, split=args.split)
        rows = batch.load_candidates(args.candidate)
        pool = Pool(device=args.device, workers=args.workers, cache_dir=args.cache_dir or None,
                    config=_eval_config(args), progress=True)
        records = batch.evaluate_batch(problems, rows, pool)
        out = batch.write_records(records, args.out)
    except (OSError, ValueError, ImportError) as exc:
        print(f"drk eval: {terminal_safe(str(exc))}", file=sys.stderr)
        return 2
    summary = batch.batch_summary(records)
    for line in batch.input_error_lines(records):  # they quote the rows' own text
        print(f"drk eval: {terminal_safe(line)}", file=sys.stderr)
    if args.json:
        print(json.dumps(json_safe(summary), indent=2, allow_nan=False))
    else:
        print(batch.format_summary(summary))
        print(f"records: {out}")
    return 0


def _parse_columns(text: str | None) -> dict[str, str] | None:
    """``code=reference_src,name=task`` -> ``{"code": "reference_src", "name": "task"}``."""
    if not text:
        return None
    pairs = [item.split("=", 1) for item in text.split(",") if item.strip()]
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"--columns {text!r}: use FIELD=COLUMN pairs, e.g. code=reference_src,name=task")
    return {field.strip(): column.strip() for field, column in pairs}


def _delegate(module: str, function: str):
    def run(args: argparse.Namespace) -> int:
        import importlib

        return int(getattr(importlib.import_module(module), function)(args.rest) or 0)

    return run


#: Subcommands with a parser of their own, which reads every argument after the name.
DELEGATED: dict[str, tuple[str, str, str]] = {
    "train": ("drk.train.cli", "main_train", "multi-turn RL training (see drk train --help)"),
    "sft": ("drk.train.cli", "main_sft", "cold-start supervised fine-tuning on stored trajectories"),
    "reproduce": ("drk.reproduce", "main", "regenerate every figure and table (runs the notebooks)"),
    "serve": ("drk.serve.cli", "main", "judge kernels over HTTP, KernelGYM-compatible (see drk serve --help)"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="drk", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="evaluate one candidate against one problem, or a batch of replies")
    ev.add_argument("problem", help="KernelBench-format problem file; for a batch, any load_problems spec "
                                    "(drk:level1, a KernelBench folder, .parquet/.jsonl/.csv, hf:OWNER/NAME[:SPLIT])")
    ev.add_argument("candidate", help="candidate module or LLM reply (the last ```python block is used); for a "
                                      "batch, a .jsonl/.parquet of {problem, reply} rows or a folder of "
                                      "<problem name>.py/.md files")
    ev.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    ev.add_argument("--json", action="store_true", help="print the whole result as JSON")
    ev.add_argument("--timeout-s", type=float, default=180.0)
    ev.add_argument("--reference-mode", choices=["eager", "compile"], default="eager")
    ev.add_argument("--timing-policy", choices=["drk", "authors"], default="drk")
    ev.add_argument("--seed", type=int, default=0)
    batch = ev.add_argument_group("batch form")
    batch.add_argument("--out", help="records file (.parquet or .jsonl), one per candidate row")
    batch.add_argument("--cache-dir", default=".drk_cache",
                       help="result cache; a re-run resumes from it ('' for none; default .drk_cache)")
    batch.add_argument("--workers", type=int, default=None, help="concurrent evaluations (default: Pool's)")
    batch.add_argument("--columns", help="problem dataset columns, e.g. code=reference_src,name=task")
    batch.add_argument("--split", help="one split of a problem dataset with splits")
    ev.set_defaults(func=_eval)
    for name, (module, function, text) in DELEGATED.items():
        cmd = sub.add_parser(name, help=text, add_help=False)
        cmd.add_argument("rest", nargs=argparse.REMAINDER)
        cmd.set_defaults(func=_delegate(module, function))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:  # argparse's REMAINDER would refuse options right after the name
        module, function, _ = DELEGATED[argv[0]]
        return _delegate(module, function)(argparse.Namespace(rest=argv[1:]))
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
