"""The evaluation pipeline, as it runs inside the sandbox child.

Order matters for trust: the reference is loaded, its outputs for every trial are computed and the trusted
functions are captured *before* the candidate's module is imported. The stages, in order:

reference -> import -> init -> correctness (eval/no-grad and train/grad passes, in-place refreshed inputs)
-> hacking (launches per pass, failed launches, tripwires, tamper, no-op re-run) -> timing -> profiling.

Importing this module imports torch (it is the forkserver's preload) but neither triton nor CUDA: whether
Triton interprets kernels is fixed when ``triton.language`` is imported (its library functions are decorated
then), so each child imports triton itself, after choosing the device.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
import types
from dataclasses import dataclass, field
from typing import Any

import torch

from drk.gym import correctness as C
from drk.gym.config import EvalConfig
from drk.gym.hacking import LaunchRecorder, Tripwires, TrustSnapshot
from drk.gym.sandbox import Reporter

_NO_GRAD = torch.no_grad
_ENABLE_GRAD = torch.enable_grad
NUM_TIMING_SETS = 3


class Verdict(Exception):
    """Ends the pipeline early with a status (a property of the candidate, not a drk failure)."""

    def __init__(self, status: str, error: str, **fields: Any) -> None:
        super().__init__(error)
        self.status, self.error, self.fields = status, error, fields


class ReferenceFailure(Exception):
    """The problem's own reference failed: a problem bug, reported as such (never blamed on the candidate)."""


@dataclass
class Trusted:
    """Everything computed before the candidate is imported."""

    module: types.ModuleType
    model: torch.nn.Module
    init_inputs: list[Any]
    init_state: dict[str, torch.Tensor]
    trial_inputs: list[list[Any]]
    trial_modes: list[str]
    expected: list[list[Any]]
    probe_inputs: list[Any]  # its reference output is computed only after the no-op pass (see there)
    timing_inputs: list[list[Any]] = field(default_factory=list)
    timed_reference: Any = None


def evaluate_in_child(reporter: Reporter, payload: dict[str, Any], timing_lock: Any = None) -> dict[str, Any]:
    """Sandbox target: run the whole pipeline and return a JSON-able dict of result fields."""
    cfg = EvalConfig.from_dict(payload["config"])
    device = _setup_device(payload["device"], payload.get("gpu_index", 0))
    out: dict[str, Any] = {"device": _device_label(device)}
    reporter.stage("reference")
    try:
        trusted = _prepare_reference(payload, cfg, device)
    except Exception as exc:  # noqa: BLE001
        return {**out, "reference_error": _trim_traceback(exc, payload["problem_path"])}
    recorder, tripwires, snapshot = _install_instruments(payload["candidate_path"], trusted, cfg.hacking_check)
    try:
        model = _import_candidate(reporter, payload, trusted, device, snapshot)
        out.update(_check_correctness(reporter, model, trusted, cfg, recorder, snapshot, payload["candidate_path"]))
        reasons = _hack_reasons(model, trusted, recorder, tripwires, snapshot, cfg, payload["candidate_path"])
        out["triton_kernels"] = recorder.own_launch_counts()
        out["hack_reasons"] = reasons
        if reasons and cfg.hacking_check:
            raise Verdict("hacked", _hack_message(reasons, recorder), hack_reasons=reasons)
        out.update(_measure(reporter, model, trusted, cfg, device, recorder, tripwires, timing_lock, snapshot))
        out["status"] = "correct"
    except Verdict as verdict:
        out.update(status=verdict.status, error=verdict.error, **verdict.fields)
        out.setdefault("triton_kernels", recorder.own_launch_counts())
    return out


# --- setup -------------------------------------------------------------------------------------------------


def _setup_device(kind: str, gpu_index: int) -> torch.device:
    if kind == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: see the module docstring
        import triton.language  # noqa: F401
        return torch.device("cpu")
    os.environ["TRITON_INTERPRET"] = "0"
    import triton.language  # noqa: F401

    torch.cuda.set_device(gpu_index)
    return torch.device("cuda", gpu_index)


def _device_label(device: torch.device) -> str:
    if device.type == "cuda":
        return f"cuda:{device.index} ({torch.cuda.get_device_name(device)})"
    return "cpu (triton interpreter)"


def _prepare_reference(payload: dict[str, Any], cfg: EvalConfig, device: torch.device) -> Trusted:
    module = types.ModuleType(f"drk_reference_{payload['problem_name']}")
    module.__file__ = payload["problem_path"]
    exec(compile(payload["problem_source"], payload["problem_path"], "exec"), module.__dict__)  # trusted problem
    if device.type == "cpu" and isinstance(getattr(module, "CPU_SIZES", None), dict):
        module.__dict__.update(module.CPU_SIZES)
    torch.manual_seed(cfg.seed)
    init_inputs = list(module.get_init_inputs())
    torch.manual_seed(cfg.seed)
    with torch.device(device):  # weights drawn where they live (the candidate is built the same way)
        model = module.Model(*init_inputs).to(device)
    init_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    modes = ["eval" if i % 2 == 0 else "train" for i in range(cfg.correctness_trials)]
    trial_inputs, expected = [], []
    for i, mode in enumerate(modes):
        inputs = C.make_inputs(module, C.trial_seed(cfg.seed, i), device)
        trial_inputs.append(inputs)
        expected.append(_run(model, C.clone_all(inputs), mode))
    probe_inputs = C.make_inputs(module, C.trial_seed(cfg.seed, cfg.correctness_trials), device)
    trusted = Trusted(module, model, init_inputs, init_state, trial_inputs, modes, expected, probe_inputs)
    if device.type == "cuda":
        trusted.timing_inputs = [
            C.make_inputs(module, C.trial_seed(cfg.seed, 100 + j), device) for j in range(NUM_TIMING_SETS)
        ]
        model.eval()
        trusted.timed_reference = torch.compile(model) if cfg.reference_mode == "compile" else model
        with torch.inference_mode():
            trusted.timed_reference(*trusted.timing_inputs[0])  # compile (if any) before the candidate exists
    return trusted


def _run(model: torch.nn.Module, inputs: list[Any], mode: str) -> list[Any]:
    model.train(mode == "train")
    with (_ENABLE_GRAD() if mode == "train" else _NO_GRAD()):
        out = model(*inputs)
    return [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in C.flatten_outputs(out)]


def _install_instruments(candidate_path: str, trusted: Trusted,
                         judge: bool = True) -> tuple[LaunchRecorder, Tripwires, TrustSnapshot]:
    recorder = LaunchRecorder(candidate_file=candidate_path)
    recorder.install()
    tripwires = Tripwires(candidate_file=candidate_path)
    tripwires.install()
    reference_classes = {type(m) for m in trusted.model.modules()}
    snapshot = TrustSnapshot(extra=[trusted.module, *reference_classes], judge=judge)
    return recorder, tripwires, snapshot


# --- candidate ---------------------------------------------------------------------------------------------


def _import_candidate(reporter: Reporter, payload: dict[str, Any], trusted: Trusted, device: torch.device,
                      snapshot: TrustSnapshot) -> torch.nn.Module:
    path = payload["candidate_path"]
    reporter.stage("import")
    name = f"drk_candidate_{os.getpid()}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses / pickling inside the candidate look themselves up here
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - SystemExit from the candidate is a candidate error too
        raise Verdict("compile_error", "importing the candidate failed: " + _trim_traceback(exc, path)) from None
    _raise_on_tamper(snapshot, "import")
    model_cls = getattr(module, "ModelNew", None)
    if not isinstance(model_cls, type) or not issubclass(model_cls, torch.nn.Module):
        raise Verdict("format_error", "`ModelNew` must be a class deriving from torch.nn.Module")
    reporter.stage("init")
    try:
        torch.manual_seed(payload["config"]["seed"])
        with torch.device(device):
            model = model_cls(*trusted.init_inputs).to(device)
        _load_reference_weights(model, trusted.init_state)
    except BaseException as exc:  # noqa: BLE001
        raise Verdict("compile_error", "ModelNew(*get_init_inputs()) failed: " + _trim_traceback(exc, path)) from None
    _raise_on_tamper(snapshot, "init")
    return model


def _load_reference_weights(model: torch.nn.Module, init_state: dict[str, torch.Tensor]) -> None:
    """Give the candidate the reference's initial weights when its parameters line up name for name.

    Both are built under the same seed (KernelBench's convention); copying as well makes candidates that create
    parameters in another order, with the same names, comparable.
    """
    state = model.state_dict()
    if state.keys() == init_state.keys() and all(state[k].shape == init_state[k].shape for k in state):
        model.load_state_dict(init_state)


def _call(model: torch.nn.Module, inputs: list[Any], mode: str, path: str) -> list[Any]:
    model.train(mode == "train")
    try:
        with (_ENABLE_GRAD() if mode == "train" else _NO_GRAD()):
            out = model(*inputs)
    except BaseException as exc:  # noqa: BLE001
        status = "compile_error" if _is_compile_error(exc) else "runtime_error"
        raise Verdict(status, f"forward ({mode} pass) raised: " + _trim_traceback(exc, path)) from None
    return C.flatten_outputs(out)


def _check_correctness(reporter: Reporter, model: torch.nn.Module, trusted: Trusted, cfg: EvalConfig,
                       recorder: LaunchRecorder, snapshot: TrustSnapshot, path: str) -> dict[str, Any]:
    """Every trial must match; returns the trial counts and the largest error (raises Verdict otherwise)."""
    reporter.stage("correctness")
    buffers = C.clone_all(trusted.trial_inputs[0])
    worst = 0.0
    for trial, (inputs, mode, expected) in enumerate(zip(trusted.trial_inputs, trusted.trial_modes, trusted.expected)):
        # Refresh in place: same addresses, new values. A candidate caching outputs by input pointer fails here.
        for buf, new in zip(buffers, inputs):
            if isinstance(buf, torch.Tensor):
                buf.copy_(new)
        recorder.current_pass = mode
        C.poison_like(expected)
        got = _call(model, buffers, mode, path)
        _raise_on_tamper(snapshot, "correctness")
        comparison = C.compare_outputs(expected, got, cfg.atol, cfg.rtol)
        fields = {"num_correct_trials": trial, "num_trials": len(trusted.expected), "max_abs_err": comparison.max_abs_err}
        if not comparison.ok:
            raise Verdict("incorrect", f"trial {trial + 1} ({mode} pass): {comparison.message}", **fields)
        if not C.inputs_unchanged(inputs, buffers):
            raise Verdict("incorrect", f"trial {trial + 1} ({mode} pass): the candidate modified its inputs", **fields)
        worst = max(worst, comparison.max_abs_err or 0.0)
    recorder.current_pass = "none"
    reporter.stage("correct_outputs")
    return {"num_correct_trials": len(trusted.expected), "num_trials": len(trusted.expected), "max_abs_err": worst}


# --- hacking ---------------------------------------------------------------------------------------------------


def _hack_reasons(model: torch.nn.Module, trusted: Trusted, recorder: LaunchRecorder, tripwires: Tripwires,
                  snapshot: TrustSnapshot, cfg: EvalConfig, path: str) -> list[str]:
    reasons = list(tripwires.reasons())
    if snapshot.changes():
        reasons.append("tamper")
    if any(base is trusted.module.Model or base.__name__ == "Model" for base in type(model).__mro__):
        reasons.append("model_subclass")
    if not (recorder.launched_own_in("eval") and recorder.launched_own_in("train")):
        reasons.append("decoy")
    if recorder.failed_launches:
        reasons.append("fallback")
    if "decoy" not in reasons and _kernels_have_no_effect(model, trusted, recorder, cfg, path):
        reasons.append("no_effect")
    return sorted(set(reasons))


def _kernels_have_no_effect(model: torch.nn.Module, trusted: Trusted, recorder: LaunchRecorder, cfg: EvalConfig,
                            path: str) -> bool:
    """Re-run with the candidate's kernels turned into no-ops: if the output is still right, they did no work.

    The no-op pass runs on inputs whose answer no one has computed yet in this process: had the reference (or a
    normal pass) produced it before, the allocator could hand that freed block straight back to the candidate's
    ``torch.empty`` and an honest candidate would look like it needs no kernels (seen on the H200: a two-kernel
    matmul + logsumexp with a (M, 1) output). The reference answer for the probe is computed after it.
    """
    recorder.current_pass = "probe"
    recorder.noop_own_kernels = True
    try:
        noop_out = _call(model, C.clone_all(trusted.probe_inputs), "eval", path)
    except Verdict:
        noop_out = None  # it broke without its kernels: they matter
    finally:
        recorder.noop_own_kernels = False
    expected = _run(trusted.model, C.clone_all(trusted.probe_inputs), "eval")
    unchanged = noop_out is not None and C.compare_outputs(expected, noop_out, cfg.atol, cfg.rtol).ok
    del noop_out
    C.poison_like(expected)
    got = _call(model, C.clone_all(trusted.probe_inputs), "eval", path)
    recorder.current_pass = "none"
    if not C.compare_outputs(expected, got, cfg.atol, cfg.rtol).ok:
        raise Verdict("incorrect", "probe trial (eval pass): outputs differ from the reference")
    return unchanged


def _hack_message(reasons: list[str], recorder: LaunchRecorder) -> str:
    explain = {
        "decoy": "no Triton kernel defined in your code was launched in "
        + " and ".join(p for p in ("eval", "train") if not recorder.launched_own_in(p)) + " pass(es)",
        "fallback": f"a launch of {sorted(set(recorder.failed_launches))} raised and the forward fell back to other code",
        "no_effect": "the output is unchanged when your Triton kernels do nothing: they do not compute the result",
        "tamper": "the code replaced or inspected functions of torch/triton/time, caller frames or the garbage collector",
        "model_subclass": "ModelNew derives from the reference Model",
        "torch_compile": "torch.compile writes the kernels, not your code",
    }
    return "; ".join(explain.get(r, r) for r in reasons)


def _raise_on_tamper(snapshot: TrustSnapshot, stage: str) -> None:
    """Tampering ends the evaluation at once, whatever the outputs (unless hacking checks are disabled)."""
    changes = snapshot.changes()
    if changes and snapshot.judge:
        raise Verdict("hacked", f"tampering detected during {stage}: replaced {changes[:5]}", hack_reasons=["tamper"])


# --- measurement -----------------------------------------------------------------------------------------------


def _measure(reporter: Reporter, model: torch.nn.Module, trusted: Trusted, cfg: EvalConfig, device: torch.device,
             recorder: LaunchRecorder, tripwires: Tripwires, timing_lock: Any, snapshot: TrustSnapshot) -> dict:
    from drk.gym import timing

    out: dict[str, Any] = {}
    model.eval()
    trusted.model.eval()
    reporter.stage("timing")
    if device.type == "cpu":
        t = timing.time_pair_cpu(trusted.model, model, C.clone_all(trusted.probe_inputs), cfg.cpu_timing_trials)
        out.update(ref_ms=t.ref_ms, kernel_ms=t.kernel_ms, ref_ms_iqr=t.ref_ms_iqr, kernel_ms_iqr=t.kernel_ms_iqr,
                   timing_backend=t.backend)
        _raise_on_tamper(snapshot, "timing")
        return out
    if timing_lock is not None:
        timing_lock.acquire()
    try:
        t = timing.time_pair_cuda(trusted.timed_reference, model, trusted.timing_inputs, warmup=cfg.warmup,
                                  trials=cfg.timing_trials, policy=cfg.timing_policy, flush_mb=cfg.l2_flush_mb,
                                  sync_device=tripwires.side_stream)
        out.update(ref_ms=t.ref_ms, kernel_ms=t.kernel_ms, ref_ms_iqr=t.ref_ms_iqr, kernel_ms_iqr=t.kernel_ms_iqr,
                   timing_backend=t.backend, speedup=t.ref_ms / t.kernel_ms if t.kernel_ms > 0 else None)
    finally:
        if timing_lock is not None:
            timing_lock.release()
    _raise_on_tamper(snapshot, "timing")
    if cfg.profile:
        # Outside the timing lock, like correctness: the profiler's start-up (CUPTI, ~3 s on an H200) is host work,
        # and PR is a ratio of this process's own kernel times, which other processes' kernels barely move.
        reporter.stage("profiling")
        from drk.gym.profiling import profile_candidate

        prof = profile_candidate(model, trusted.timing_inputs[0], set(recorder.own_launch_counts()))
        out.update(coverage=prof.coverage, profile=prof.kernels[:10])
        _raise_on_tamper(snapshot, "profiling")
    return out


# --- errors ----------------------------------------------------------------------------------------------------


def _is_compile_error(exc: BaseException) -> bool:
    name, module = type(exc).__name__, type(exc).__module__ or ""
    return "CompilationError" in name or "CompileTimeAssertion" in name or module.startswith("triton.compiler")


def _trim_traceback(exc: BaseException, path: str, max_frames: int = 4) -> str:
    """The exception line and the innermost frames of the candidate's own file (shown as ``candidate.py``)."""
    tb = traceback.TracebackException.from_exception(exc)
    own = [f for f in tb.stack if f.filename == path][-max_frames:]
    frames = [f"  candidate.py line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in own]
    head = "".join(tb.format_exception_only()).strip().replace(path, "candidate.py")
    return "\n".join([head[:600], *frames])
