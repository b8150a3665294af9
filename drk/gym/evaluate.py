"""``evaluate``: judge one candidate for one problem, in a sandboxed child process."""

from __future__ import annotations

import ast
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from drk.gym.config import EvalConfig
from drk.gym.extract import extract_code
from drk.gym.feedback import make_feedback
from drk.gym.problem import Problem
from drk.gym.result import EvalResult
from drk.gym.sandbox import SandboxOutcome, run_sandboxed
from drk.gym.static_checks import defines_model_new, run_static_checks

DEVICES = ("auto", "cuda", "cpu")


class ProblemError(RuntimeError):
    """The problem's reference itself failed: a bug in the problem, not in the candidate."""


def resolve_device(device: str) -> str:
    """``"auto"`` becomes ``"cuda"`` when a GPU is visible, else ``"cpu"`` (Triton interpreter)."""
    if device not in DEVICES:
        raise ValueError(f"device={device!r}: choose one of {DEVICES}")
    if device == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def evaluate(problem: Problem, candidate_src: str, *, device: str = "auto", config: EvalConfig | None = None,
             gpu_index: int = 0, timing_lock: Any = None) -> EvalResult:
    """Evaluate a candidate (a module, or an LLM reply with a fenced python block) against ``problem``.

    Never raises because of the candidate: every failure is a status of the returned result.

    Args:
        problem: the reference.
        candidate_src: the candidate module source, or a whole reply (the last fenced block is used).
        device: ``"cuda"``, ``"cpu"`` (Triton interpreter) or ``"auto"``.
        config: evaluation settings; defaults to ``EvalConfig()``.
        gpu_index: which GPU to use on a multi-GPU host.
        timing_lock: held by the child while it times; default a :class:`GpuTimingLock` for ``gpu_index``, so
            timings on one GPU never overlap, whoever runs them on this host.

    Raises:
        ProblemError: the problem's reference failed to run.
        ValueError: bad ``device`` or config.
    """
    config = config or EvalConfig()
    kind = resolve_device(device)
    start = time.monotonic()
    early = _check_source(candidate_src, config)
    if isinstance(early, EvalResult):
        early.problem, early.elapsed_s = problem.name, time.monotonic() - start
        early.reference_mode, early.timing_policy = config.reference_mode, config.timing_policy
        early.device = "cpu (triton interpreter)" if kind == "cpu" else kind
        early.feedback = make_feedback(early)
        return early
    code, static_reasons = early
    if kind == "cuda" and timing_lock is None:
        from drk.gym.gpu_lock import GpuTimingLock

        timing_lock = GpuTimingLock(gpu_index)
    with tempfile.TemporaryDirectory(prefix="drk_eval_") as tmp:
        path = Path(tmp) / "candidate.py"
        path.write_text(code)
        payload = {
            "problem_source": problem.source,
            "problem_name": problem.name,
            "problem_path": problem.path or f"<problem {problem.name}>",
            "candidate_path": str(path),
            "device": kind,
            "gpu_index": gpu_index,
            "config": config.to_dict(),
        }
        from drk.gym.worker import evaluate_in_child

        stdio = Path(tmp) / "stdio.txt"
        outcome = run_sandboxed(evaluate_in_child, (payload, timing_lock), config.timeout_s, stdio_path=str(stdio))
        where = _candidate_stack(stdio, str(path))
    result = _result_from_outcome(outcome, problem, config, kind, static_reasons)
    if where and result.status in ("runtime_error", "timeout") and outcome.result is None:
        result.error = f"{result.error}\nlast candidate lines on the stack:\n{where}"
    result.elapsed_s = time.monotonic() - start
    result.feedback = make_feedback(result)
    return result


def _check_source(candidate_src: str, config: EvalConfig) -> EvalResult | tuple[str, list[str]]:
    """Parent-side checks on the text alone: extraction, syntax, ``ModelNew``, static hacking checks."""
    if not isinstance(candidate_src, str):
        return EvalResult(status="format_error", error=f"candidate must be a string, got {type(candidate_src).__name__}")
    code = extract_code(candidate_src)
    if code is None:
        return EvalResult(status="format_error", error="no code found in the answer (put the module in a ```python block)")
    if len(code) > config.max_source_chars:
        return EvalResult(status="format_error", error=f"the code is {len(code)} characters; the limit is {config.max_source_chars}")
    try:
        ast.parse(code)
    except SyntaxError as exc:
        if "```" not in candidate_src and "ModelNew" not in candidate_src:
            return EvalResult(status="format_error", error="no code found in the answer (put the module in a ```python block)")
        return EvalResult(status="compile_error", error=f"SyntaxError: {exc.msg} (line {exc.lineno})")
    except (ValueError, RecursionError, MemoryError) as exc:
        return EvalResult(status="compile_error", error=f"the code could not be parsed: {type(exc).__name__}")
    if not defines_model_new(code):
        return EvalResult(status="format_error", error="no `class ModelNew` defined at module level")
    reasons = run_static_checks(code)
    if reasons and config.hacking_check:
        return EvalResult(status="hacked", hacked=True, hack_reasons=reasons,
                          error=f"static checks flagged: {', '.join(reasons)}")
    return code, reasons


def _candidate_stack(stdio: Path, candidate_path: str, max_lines: int = 4) -> str:
    """The candidate's own frames from a faulthandler dump in the child's output ('' when there are none).

    faulthandler prints the innermost frame first; we keep the candidate's frames only, innermost first.
    """
    try:
        text = stdio.read_text(errors="replace")[-20_000:]
        source = Path(candidate_path).read_text().splitlines()
    except OSError:
        return ""
    frames = []
    for line in text.splitlines():
        match = re.search(r'File "(.+)", line (\d+) in (\S+)', line)
        if match and match.group(1) == candidate_path:
            number = int(match.group(2))
            code = source[number - 1].strip() if 0 < number <= len(source) else ""
            frames.append(f"  candidate.py line {number}, in {match.group(3)}: {code}")
    return "\n".join(frames[:max_lines])


def _result_from_outcome(outcome: SandboxOutcome, problem: Problem, config: EvalConfig, kind: str,
                         static_reasons: list[str]) -> EvalResult:
    base = {"problem": problem.name, "reference_mode": config.reference_mode, "timing_policy": config.timing_policy,
            "stage": outcome.last_stage, "stage_s": outcome.stage_s, "device": "cpu (triton interpreter)" if kind == "cpu" else kind}
    data = outcome.result
    if data is not None and "reference_error" in data:
        raise ProblemError(f"the reference of problem {problem.name!r} failed: {data['reference_error']}")
    if data is not None and "internal_error" in data:
        return EvalResult(status="runtime_error", error=f"evaluation aborted in stage {outcome.last_stage}: "
                          f"{data['internal_error']}", **base)
    if outcome.timed_out:
        return EvalResult(status="timeout", error=f"no verdict within {config.timeout_s:.0f} s "
                          f"(stuck in stage '{outcome.last_stage}')", **base)
    if data is None:
        how = f"exit code {outcome.exitcode}" if (outcome.exitcode or 0) >= 0 else f"signal {-outcome.exitcode}"
        return EvalResult(status="runtime_error", error=f"the evaluation process died ({how}) in stage "
                          f"'{outcome.last_stage}' (segfault, os._exit, out of memory or a CUDA fault)", **base)
    fields = {k: v for k, v in data.items() if k in EvalResult.__dataclass_fields__}
    fields.setdefault("status", "runtime_error")
    result = EvalResult(**{**base, **fields})
    result.hack_reasons = sorted(set(result.hack_reasons) | set(static_reasons))  # evidence, even if unjudged
    result.hacked = result.status == "hacked"
    result.correct = result.status == "correct"
    return result
