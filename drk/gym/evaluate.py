"""``evaluate``: judge one candidate for one problem, in a sandboxed child process."""

from __future__ import annotations

import ast
import json
import time
from typing import Any

from drk.gym import probes, wire
from drk.gym.config import EvalConfig
from drk.gym.extract import extract_code
from drk.gym.feedback import make_feedback
from drk.gym.isolation import IsolationUnavailable, available_level
from drk.gym.judge import BEFORE_CANDIDATE_S, MAX_PROBE_RUNNERS, PROBE_START_GRACE_S
from drk.gym.judges import shared_judges
from drk.gym.problem import Problem
from drk.gym.result import EvalResult
from drk.gym.sandbox import SandboxOutcome
from drk.gym.secret import judge_secret
from drk.gym.static_checks import defines_model_new, run_static_checks
from drk.gym.warm import shared_runners

DEVICES = ("auto", "cuda", "cpu")


class ProblemError(RuntimeError):
    """The problem's reference itself failed: a bug in the problem, not in the candidate."""


def resolve_device(device: str) -> str:
    """``"auto"`` becomes ``"cuda"`` when a GPU is visible, else ``"cpu"`` (Triton interpreter).

    Raises:
        ValueError: an unknown device, or ``"cuda"`` on a machine where no GPU is visible.
    """
    if device not in DEVICES:
        raise ValueError(f"device={device!r}: choose one of {DEVICES}")
    if device == "cpu":
        return device
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' but no GPU is visible here; use device='cpu' (Triton interpreter) or 'auto'")
    return "cuda" if torch.cuda.is_available() else "cpu"


def evaluate(problem: Problem, candidate_src: str, *, device: str = "auto", config: EvalConfig | None = None,
             gpu_index: int = 0, timing_lock: Any = None) -> EvalResult:
    """Evaluate a candidate (a module, or an LLM reply with a fenced python block) against ``problem``.

    Never raises because of the candidate: every failure is a status of the returned result. The judging runs in
    a warm trusted judge process (:mod:`drk.gym.judges`), which runs the candidate in an OS sandbox of its own.

    Args:
        problem: the reference.
        candidate_src: the candidate module source, or a whole reply (the last fenced block is used).
        device: ``"cuda"``, ``"cpu"`` (Triton interpreter) or ``"auto"``.
        config: evaluation settings; defaults to ``EvalConfig()``.
        gpu_index: which GPU to use on a multi-GPU host.
        timing_lock: held by the judge while it times; default a :class:`GpuTimingLock` for ``gpu_index``, so
            timings on one GPU never overlap, whoever runs them on this host.

    Raises:
        ProblemError: the problem's reference failed or hung (a problem bug, never the candidate's).
        ValueError: bad ``device`` or config.
    """
    config = config or EvalConfig()
    kind = resolve_device(device)
    start = time.monotonic()
    early = _check_source(candidate_src, config)
    if isinstance(early, EvalResult):
        return _without_judge(early, problem, config, _device_label(kind), start)
    code, static_reasons, rewrites = early
    if kind == "cuda" and timing_lock is None:
        from drk.gym.gpu_lock import GpuTimingLock

        timing_lock = GpuTimingLock(gpu_index)
    taking = time.monotonic()
    try:
        level = available_level(config.isolation).level  # probed once per caller process
        # a probe runner of this kind starts now, if none is spare; without a profile (EvalConfig.profile=False)
        # the candidate's runner never warms the profiler up either (CUPTI's start-up: seconds of host time each)
        shared_runners().warm(kind, gpu_index, level, profiler=config.profile)
        runner = shared_runners().take(kind, gpu_index, level, profiler=config.profile)
    except (IsolationUnavailable, OSError) as exc:  # the environment's failure: never charged to the candidate
        failure = EvalResult(status="runtime_error", error=f"[drk] environment failure: no candidate sandbox: {exc}",
                             env_error=True)
        return _without_judge(failure, problem, config, _device_label(kind), start)
    runners_s = time.monotonic() - taking  # waiting for a started runner (a pool's spares can run short)
    probe_runners: list[Any] = []

    def probe_runner() -> Any:
        """A probe runner, taken only when the judge asks (the candidate passed its correctness checks; another one
        after a probe call in which the last died, up to MAX_PROBE_RUNNERS)."""
        if len(probe_runners) >= MAX_PROBE_RUNNERS:
            raise OSError(f"an evaluation has at most {MAX_PROBE_RUNNERS} probe runners")
        # probes never profile; the replacement starts with the next evaluation (its warm), not during this timing
        probe_runners.append(shared_runners().take(kind, gpu_index, level, profiler=False, top_up=False))
        return probe_runners[-1].handle

    payload = {
        "problem_source": problem.source,
        "problem_name": problem.name,
        "problem_path": problem.path or f"<problem {problem.name}>",
        "candidate_source": code,
        **rewrites,
        "static_reasons": static_reasons,
        "device": kind,
        "gpu_index": gpu_index,
        "config": config.to_dict(),
        "isolation_level": level,
        "secret": judge_secret().hex(),  # hidden seeds: repeatable here, unpredictable to the candidate
    }

    try:
        outcome = shared_judges().run(kind, gpu_index, payload, timing_lock, [runner.handle],
                                      judge_limit_s(config), more_runner=probe_runner)
    finally:
        judged = time.monotonic()
        for process in (runner, *probe_runners):  # whatever the judge did: the candidate's processes never
            process.kill()  # outlive their evaluation
    result = _result_from_outcome(outcome, problem, config, kind, static_reasons)
    result.elapsed_s = time.monotonic() - start
    # the caller's own waits, beside the judge's stages: where an evaluation's time went when the stages don't add up
    result.stage_s = {"runners": round(runners_s, 4), **result.stage_s,
                      "teardown": round(time.monotonic() - judged, 4)}
    result.feedback = make_feedback(result)
    return result


def judge_limit_s(config: EvalConfig) -> float:
    """The longest a judge may take before it is replaced: its own stages before the candidate (``timeout_s`` +
    :data:`~drk.gym.judge.BEFORE_CANDIDATE_S`), the candidate's ``timeout_s``, a probe runner's start-up grace
    (:data:`~drk.gym.judge.PROBE_START_GRACE_S`) and a minute for its answer."""
    return 2 * config.timeout_s + BEFORE_CANDIDATE_S + PROBE_START_GRACE_S + 60.0


def decided_without_judge(problem: Problem, candidate_src: str, config: EvalConfig | None = None,
                          device: str = "") -> EvalResult | None:
    """The verdict of the checks on the text alone (no code, too long, a syntax error, no ``ModelNew``, too deeply
    nested), completed as :func:`evaluate` completes it; ``None`` when a judge has to decide.

    Every evaluator decides these the same way and charges them: :class:`drk.gym.remote.RemoteEvaluator` once sent
    them to its server, whose refusal of an oversized request came back as an uncharged ``env_error`` (attacker review
    7), and completed them by hand without the feedback a trainer's next turn reads (attacker review 8).
    """
    config = config or EvalConfig()
    start = time.monotonic()
    early = _check_source(candidate_src, config)
    return _without_judge(early, problem, config, device, start) if isinstance(early, EvalResult) else None


def _device_label(kind: str) -> str:
    return "cpu (triton interpreter)" if kind == "cpu" else kind


def _without_judge(result: EvalResult, problem: Problem, config: EvalConfig, device: str, start: float) -> EvalResult:
    """Complete a result decided before any judge ran (a malformed candidate, no sandbox)."""
    result.problem, result.elapsed_s = problem.name, time.monotonic() - start
    result.reference_mode, result.timing_policy = config.reference_mode, config.timing_policy
    result.device = device
    result.feedback = make_feedback(result)
    return result


#: The candidate's source, JSON-encoded, at most this many bytes: half the runners' request
#: limit (:data:`drk.gym.wire.MAX_HEADER_BYTES`), the rest for the problem's source and the request's fields.
MAX_ENCODED_SOURCE_BYTES = wire.MAX_HEADER_BYTES // 2


def _check_source(candidate_src: str, config: EvalConfig) -> EvalResult | tuple[str, list[str], dict[str, Any]]:
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
    try:  # the source's kernel names, read here once: a source that cannot be walked is the candidate's
        # (the judge reading it again, a few stack frames deeper, once turned a decoy into an uncharged env_error)
        rewrites = {"jit_function_names": probes.jit_function_names(code)}
    except (RecursionError, MemoryError, ValueError, SyntaxError) as exc:
        return EvalResult(status="format_error", error=f"the code is nested too deeply for the environment to check "
                          f"it ({type(exc).__name__}): split long expressions")
    # What the runners will be sent, JSON-encoded, must fit their request limit: a string of astral-plane characters
    # (12 bytes each once escaped) under max_source_chars made a load 4.6 MB, refused by the runner: a decoy became
    # an uncharged env_error (attacker review, 2026-12-01).
    encoded = len(json.dumps(code))
    if encoded > MAX_ENCODED_SOURCE_BYTES:
        return EvalResult(status="format_error", error=f"the code is {encoded} bytes once encoded; the limit is "
                          f"{MAX_ENCODED_SOURCE_BYTES} (long non-ASCII strings?)")
    reasons = run_static_checks(code)
    if reasons and config.hacking_check:
        return EvalResult(status="hacked", hacked=True, hack_reasons=reasons,
                          error=f"static checks flagged: {', '.join(reasons)}")
    return code, reasons, rewrites


def _result_from_outcome(outcome: SandboxOutcome, problem: Problem, config: EvalConfig, kind: str,
                         static_reasons: list[str]) -> EvalResult:
    base = {"problem": problem.name, "reference_mode": config.reference_mode, "timing_policy": config.timing_policy,
            "stage": outcome.last_stage, "stage_s": outcome.stage_s, "device": "cpu (triton interpreter)" if kind == "cpu" else kind}
    data = outcome.result
    if data is not None and "reference_error" in data:
        raise ProblemError(f"the reference of problem {problem.name!r} failed: {data['reference_error']}")
    if outcome.timed_out and outcome.last_stage in ("startup", "reference"):
        raise ProblemError(f"the reference of problem {problem.name!r} did not finish in time "
                           f"(stage '{outcome.last_stage}')")
    if data is None or "internal_error" in data or outcome.timed_out:
        # The judge is drk's own trusted process and the candidate cannot reach it: its failure (killed, out of
        # memory, a drk bug, no sandbox) is the environment's, never charged to the candidate.
        why = data["internal_error"] if data is not None and "internal_error" in data else (
            "the judge did not answer in time" if outcome.timed_out else
            f"the judge process died (exit code {outcome.exitcode})")
        return EvalResult(status="runtime_error", error=f"[drk] environment failure in stage "
                          f"'{outcome.last_stage}': {why}", env_error=True, **base)
    fields = {k: v for k, v in data.items() if k in EvalResult.__dataclass_fields__}
    fields.setdefault("status", "runtime_error")
    result = EvalResult(**{**base, **fields})
    result.hack_reasons = sorted(set(result.hack_reasons) | set(static_reasons))  # evidence, even if unjudged
    result.hacked = result.status == "hacked"
    result.correct = result.status == "correct"
    return result
