"""One *round* of calls: the unit of work both sides of an evaluation run, with the same code.

The judge runs rounds of the trusted reference in its own process; the candidate's runner runs rounds of
``ModelNew`` in the sandbox. A round is: make the inputs of every call from seeds the judge chose (untimed), then
``go``: for each call, flush L2, record, call, record, synchronise the whole device; finally compute cheap
checksums (*digests*) of every output and input. Correctness rounds and timing rounds are the same operation, so
the candidate cannot tell them apart, and every call's outputs are checked (by digest) whether or not it was timed.

Because the judge's own rounds go through the same loop, the judge knows how much wall time a round costs beyond
the sum of its per-call times (flushes, syncs, digests); a candidate's round that needs much more than that hid
work outside its reported times (``timing_mismatch``).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from drk.gym import digest_kernel, wire
from drk.gym.correctness import Moved, tolerance_for

_perf_counter = time.perf_counter
_NO_GRAD = torch.no_grad
_ENABLE_GRAD = torch.enable_grad
MODES = ("eval", "train")
#: The variant under which a runner keeps the problem's reference for the judge's calibration rounds (trusted code,
#: run before the candidate is loaded).
CALIBRATION = "calibration"


@dataclass(frozen=True)
class CallSpec:
    """What the judge asks for one call: an input seed, an optional ``(scale, shift)`` perturbation of the
    floating-point inputs (and of the integer ones with ``ints``: :func:`perturb_integers`), and the pass (``eval`` =
    ``model.eval()`` + no-grad, ``train`` = train + grad)."""

    seed: int
    mode: str = "eval"
    scale: float = 1.0
    shift: float = 0.0
    ints: bool = False
    int_draw: tuple[float, float] = (0.0, 0.0)  # where the integers go (:func:`perturb_integers`)
    #: the share of each tensor's elements the perturbation moves, at positions drawn from the seed (0: all of them)
    sparse: float = 0.0

    @property
    def perturbed(self) -> bool:
        """Whether the call is on a hidden set (its inputs scaled or shifted), not on ``get_inputs()``' own."""
        return self.scale != 1.0 or self.shift != 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "mode": self.mode, "scale": self.scale, "shift": self.shift, "ints": self.ints,
                "int_draw": list(self.int_draw), "sparse": self.sparse}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallSpec:
        mode = data.get("mode")
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}")
        u, v = (float(x) for x in data.get("int_draw", (0.0, 0.0)))
        if not (0.0 <= u < 1.0 and 0.0 <= v < 1.0):
            raise ValueError(f"int_draw {(u, v)!r}")
        sparse = float(data.get("sparse", 0.0))
        if not 0.0 <= sparse < 1.0:
            raise ValueError(f"sparse {sparse!r}")
        return cls(int(data["seed"]), mode, float(data.get("scale", 1.0)), float(data.get("shift", 0.0)),
                   data.get("ints") is True, (u, v), sparse)


def make_inputs(module: Any, spec: CallSpec, device: torch.device) -> list[Any]:
    """The problem's ``get_inputs()`` under ``spec.seed`` on ``device``, floating tensors perturbed by the spec.

    ``get_inputs()`` runs under ``torch.device(device)`` so ``torch.randn`` draws on the GPU directly. Then torch's
    generators are seeded again, from a one-way function of the seed (:func:`seed_after_inputs`), on both sides
    alike (a model that draws in its call, a dropout, draws the same in the judge and the runner): a timed call's
    inputs are made just before it, and ``torch.initial_seed()`` inside the call gave its seed back, from which a
    module predicted the sparse set's positions and told it apart with 64 reads (attacker review 23).

    Every tensor is a copy that keeps the layout (:func:`_layout_copy`), perturbed in place: a module-level tensor
    ``get_inputs()`` returns each time is never written (the second round's refill wrote into it, and an honest
    kernel was ``incorrect``), and a hidden set's inputs have the seeded calls' strides, storage offset and leaf
    status (a perturbation made a sliced or expanded input contiguous and gave a grad-requiring one a ``grad_fn``: a
    free tell, attacker review 23, F3-F4).
    """
    torch.manual_seed(spec.seed)
    with torch.device(device):
        inputs = module.get_inputs()
    torch.manual_seed(seed_after_inputs(spec.seed))
    out = []
    for index, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            x, storage = _layout_copy(x.to(device))
            if x.is_floating_point() and spec.perturbed:
                _perturb_floats(x, storage, spec, index)
            elif spec.ints and is_integer_tensor(x):
                moved = perturb_integers(storage, spec.scale, spec.shift, spec.int_draw)  # the whole tensor's terms
                if moved is not storage:
                    if spec.sparse <= 0.0:
                        storage.copy_(moved)
                    else:
                        offsets = _sparse_offsets(x, spec, index)
                        storage[offsets] = moved[offsets]
            x.requires_grad_(bool(inputs[index].requires_grad) and (x.is_floating_point() or x.is_complex()))
        out.append(x)
    return out


def _layout_copy(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A detached copy of ``x`` with its sizes and strides, in a storage of its own that spans exactly the elements
    ``x`` reaches (so offset 0), and that storage as a flat tensor: what :func:`make_inputs` perturbs in place.
    One copy of the elements, as a perturbation makes; an expanded tensor keeps its stride 0 (one copy of the
    elements it repeats)."""
    x = x.detach()
    span = 1 + sum((size - 1) * stride for size, stride in zip(x.shape, x.stride())) if x.numel() else 0
    flat = torch.empty(span, dtype=x.dtype, device=x.device)
    if span:
        flat.copy_(torch.as_strided(x, (span,), (1,), x.storage_offset()))
    copy = torch.empty(0, dtype=x.dtype, device=x.device).set_(flat.untyped_storage(), 0, x.shape, x.stride())
    return copy, flat


def _perturb_floats(x: torch.Tensor, storage: torch.Tensor, spec: CallSpec, index: int) -> None:
    """``spec``'s scale and shift on every element of ``x`` (through its flat ``storage``), or on a sparse set's."""
    if spec.sparse <= 0.0:
        storage.mul_(spec.scale).add_(spec.shift)
    elif x.numel():
        offsets = _sparse_offsets(x, spec, index)
        storage[offsets] = storage[offsets] * spec.scale + spec.shift  # an aliased element: the same value twice


def seed_after_inputs(seed: int) -> int:
    """The seed torch's generators get once a call's inputs are drawn: a one-way function of the call's seed."""
    digest = hashlib.blake2b(int(seed).to_bytes(16, "little", signed=True), digest_size=8, person=b"drk-after").digest()
    return int.from_bytes(digest, "little") & (2**63 - 1)


def _sparse_offsets(x: torch.Tensor, spec: CallSpec, index: int) -> torch.Tensor:
    """Where a sparse hidden set moves input ``index`` (a tensor of :func:`_layout_copy`'s, offset 0): a
    ``spec.sparse`` share of its elements (at least one), at positions drawn from the call's seed and the input's
    index by a generator of their own (the global one, which the call's model may draw from next, is left as
    ``get_inputs()`` left it), as offsets into its storage (elements an expanded tensor repeats share one). A
    sample of the elements then looks like ``get_inputs()``', the moved ones do not (attacker review 22)."""
    # drawn where the tensor is: a copy to the GPU waits for it, and the host then waited before sparse calls only,
    # a tell a call could time (attacker review 24, F3, reasoned)
    generator = torch.Generator(device=x.device).manual_seed((spec.seed * 1_000_003 + index) % 2**63)
    count = max(1, round(spec.sparse * x.numel()))
    positions = torch.randint(0, x.numel(), (count,), generator=generator, device=x.device)
    if x.dim() == 0:
        return positions
    where = torch.unravel_index(positions, x.shape)
    return sum(i * stride for i, stride in zip(where, x.stride()))


def is_integer_tensor(x: Any) -> bool:
    """An integer tensor a hidden set may perturb (not bool: a mask has two values to take)."""
    return isinstance(x, torch.Tensor) and not (x.is_floating_point() or x.is_complex()) and x.dtype != torch.bool


#: How far a hidden set may carry integer inputs: ``|k| * max|x|`` up to this, and a quarter of the dtype's range
#: (2**29 for int32). Review 20: at 2**24 no value float32 cannot hold was drawn, and an integer kernel that went
#: through float32 (wrong on 96 % of random int32 values) was ``correct`` 3 of 3.
INTEGER_REACH = 1 << 30


def perturb_integers(x: torch.Tensor, scale: float, shift: float, draw: tuple[float, float]) -> torch.Tensor:
    """A hidden set's integer input ``x`` as ``x * k + c + ((i + o) mod |k|)`` in its dtype, ``i`` each element's
    flat position and ``(u, v) = draw`` placing it: the last term, consecutive integers along the tensor, puts the
    results in every residue class (``x * k`` alone are all multiples of ``k``; a term in ``x`` only changes the
    slope). With ``M = max|x|`` (at least 1) and ``K = INTEGER_REACH / M`` (at least 2, and a quarter of the
    dtype's range at most):

    - a shifted set (``shift != 0``): ``k`` 1 or 2 (by ``u``), ``c`` uniform in +-4M (by ``v``), ``o = 0``: near the
      drawn range, on either side of it, and in about half the evaluations wholly on one side of it;
    - a sign-flipped set (``scale < 0``): ``k = -|k|``, ``|k|`` log-uniform in K/2..K, ``c = 0``: always as far as
      the reach goes (values beyond 2**24, which float32 cannot hold, in every evaluation of an int32 problem whose
      inputs reach 32 in magnitude);
    - otherwise ``k`` log-uniform in 2..K, ``c = 0``: anywhere from just past the range to far from it.

    ``o`` is ``v`` x ``|k|`` in the last two. Unchanged when the result would not fit the dtype.

    Attacker reviews 17 and 19: a set drawn from ``get_inputs()``' range let a kernel wrong only outside it be
    ``correct`` (``int_ops/attack_int_range``), and sets ``x * k`` with ``k`` 2..8 and a positive shift under 2M never
    reached a value beyond +-8M, nor one there coprime to 210: kernels wrong exactly there were ``correct`` 5 of 5
    (``attack_int_far``, ``attack_int_coprime``); review 20: nor a value float32 cannot hold (``attack_int_via_float``),
    nor a set wholly beyond one end of the range. The judge perturbs integers only where the reference accepts it
    (``judge.plan_correctness``: an index out of range is not)."""
    u, v = draw
    wide = x.to(torch.int64)
    largest = max(1, int(wide.abs().max())) if x.numel() else 1
    info = torch.iinfo(x.dtype)
    if shift != 0.0:
        k, c, o = (1 if u < 0.5 else 2), round((2.0 * v - 1.0) * 4.0 * largest), 0
    else:
        reach = max(2, min(INTEGER_REACH, max(abs(info.min), info.max) // 4) // largest)
        low = max(2.0, reach / 2) if scale < 0 else 2.0
        size = max(2, round(math.exp(math.log(low) + u * (math.log(max(reach, low)) - math.log(low)))))
        k, c, o = (-size if scale < 0 else size), 0, int(v * size)
    positions = torch.arange(x.numel(), device=x.device, dtype=torch.int64).view(x.shape)
    moved = wide * k + c + torch.remainder(positions + o, abs(k))
    if x.numel() and (int(moved.min()) < info.min or int(moved.max()) > info.max):
        return x
    return moved.to(x.dtype)


def call_model(model: Callable[..., Any], inputs: Sequence[Any], mode: str) -> list[Any]:
    """One forward in ``mode``; returns the flattened outputs (tensors detached)."""
    set_mode = getattr(model, "train", None)
    if callable(set_mode):
        set_mode(mode == "train")
    with (_ENABLE_GRAD() if mode == "train" else _NO_GRAD()):
        out = model(*inputs)
    return flatten_outputs(out)


def flatten_outputs(out: Any) -> list[Any]:
    """Tensors (and scalars) of a forward's output, in order; nested tuples/lists are flattened."""
    if isinstance(out, (tuple, list)):
        return [leaf for item in out for leaf in flatten_outputs(item)]
    if isinstance(out, torch.Tensor):
        return [out.detach()]
    return [out]


class CallFailed(Exception):
    """A call of the round raised; ``index`` says which."""

    def __init__(self, index: int, exc: BaseException) -> None:
        super().__init__(str(exc))
        self.index, self.exc = index, exc


#: How much later than the reference's a candidate's calls may typically settle: the median over a timing of
#: ``end -> settled`` (the host's latency after a whole-device synchronise) on the candidate's side minus the same on
#: the reference's. More means its calls left work running on another stream or thread (charged then, see
#: :func:`settled_times`). Per call the host latency itself varies (its medians per round of 100 calls ranged
#: 0.015-0.082 ms on an H200 host, results/gpu/2026-12-01-s12/call3_timing_noise.log, single calls more), which is
#: why the decision is taken on medians of both sides, never per call.
SETTLE_SLACK_MS = 0.05


def run_round(model: Callable[..., Any], input_sets: Sequence[Sequence[Any]], modes: Sequence[str], *,
              device: torch.device, flush: torch.Tensor | None,
              keep: Callable[[int, Sequence[Any], list[Any]], Any] | None = None,
              lates: list[float] | None = None, flushes: list[float] | None = None, head_start_cycles: int = 0,
              sync_before_start: bool = False, burst_cycles: int = 0,
              starved: list[bool] | None = None) -> tuple[list[float], list[Any]]:
    """Call ``model`` once per input set; per-call milliseconds and what is kept of each call.

    On CUDA each call is bracketed by events on the current stream (``start``, ``end``), then the whole device is
    synchronised and a third event (``settled``) recorded. The call's time is ``start -> end`` (the GPU's clock only:
    no host latency in it); ``end -> settled`` goes to ``lates`` when given. It is the host's latency after the
    synchronise plus any work the call left running on another stream or thread: the judge compares its median with
    the reference's (:data:`SETTLE_SLACK_MS`) and charges such work when the candidate's is larger. Both sides run
    the same loop. On CPU the clock is ``perf_counter`` and ``lates`` get 0.

    With a flush on CUDA, a fourth event (``flushing``) is recorded before it: ``flushing -> start`` goes to
    ``flushes`` when given. Work a call puts on a stream of its own that never waits for the current stream can run
    during the flush, before ``start``, where no other event sees it (``attack_side_stream_launder`` got 2.78x where
    honest relu2 kernels got ~2x on an H200, 2026-12-03); sharing the GPU, it slows the flush, and the judge charges
    a candidate whose flushes typically take longer than the reference's (:func:`flushed_times`).
    ``sync_before_start=True`` (an experiment of ``benchmarks/timing_noise.py``, never in evaluations) synchronises
    the device after the flush instead, so nothing can run before ``start``: it put the host's latency from
    ``start`` to the call's first launch into every call's time (relu2's fused kernel 0.130 -> 0.167-0.237 ms, its
    speedup 1.99x -> 1.33-1.67x varying by process, on an H200, 2026-12-03, ``results/gpu/2026-12-03-s24``).

    ``head_start_cycles`` (CUDA; an experiment of ``benchmarks/timing_noise.py``, 0 in evaluations): queue that many
    GPU cycles of busy-waiting before ``start``, so a host that is slow to reach the call (a busy machine) does not
    put its latency inside ``start -> end`` (it reopens the window above: a side stream can run meanwhile).

    ``input_sets`` may be a :class:`LazyInputs` (each set made just before its call, untimed, and dropped after it);
    ``keep(index, inputs, outputs)`` says what to keep of each call (default: the outputs), so a round of big
    tensors holds one call's inputs and only what the caller needs of the others.

    ``burst_cycles`` (CUDA; ``EvalConfig.timing_burst_cycles``): a *burst round* instead: that many GPU cycles of
    busy-wait queued first, then every call's flush, events and call queued back to back, and one whole-device
    synchronise at the end. ``keep`` must then not wait for the device (:func:`start_digests`, not
    :func:`digest_values`). ``lates`` get 0 (work a call leaves running is inside the round's wall time, which the
    judge bounds, and in no event interval). On CPU it changes nothing: calls there are synchronous. ``starved`` gets
    one flag per burst round: True when the busy-wait had already ended when the host finished queueing the round, so
    the GPU may have waited for the host and the host's latency be in the round's wall time (the judge lengthens the
    busy-wait; the flag can only cost the side that sends it time or the evaluation more busy-wait).

    Raises:
        CallFailed: a call raised (its index and exception).
    """
    times: list[float] = []
    kept: list[Any] = []
    cuda = device.type == "cuda"
    if cuda and burst_cycles:
        return _burst_round(model, input_sets, modes, flush, keep, lates, flushes, burst_cycles, starved)
    for index, mode in enumerate(modes):
        inputs = input_sets[index]
        flushing = None
        if flush is not None:
            if cuda:
                flushing = torch.cuda.Event(enable_timing=True)
                flushing.record()
            flush.zero_()
        if cuda and sync_before_start:
            torch.cuda.synchronize(device)
        if cuda and head_start_cycles:
            torch.cuda._sleep(head_start_cycles)
        try:
            if cuda:
                start, end, settled = (torch.cuda.Event(enable_timing=True) for _ in range(3))
                start.record()
                out = call_model(model, inputs, mode)
                end.record()
                torch.cuda.synchronize()
                settled.record()
                settled.synchronize()
                times.append(start.elapsed_time(end))
                if lates is not None:
                    lates.append(end.elapsed_time(settled))
                if flushes is not None:
                    flushes.append(flushing.elapsed_time(start) if flushing is not None else 0.0)
            else:
                t0 = _perf_counter()
                out = call_model(model, inputs, mode)
                times.append((_perf_counter() - t0) * 1e3)
                if lates is not None:
                    lates.append(0.0)
                if flushes is not None:
                    flushes.append(0.0)
        except BaseException as exc:  # noqa: BLE001 - the candidate's failure is data for the judge
            raise CallFailed(index, exc) from None
        kept.append(keep(index, inputs, out) if keep is not None else out)
        del inputs, out
    return times, kept


def _burst_round(model: Callable[..., Any], input_sets: Sequence[Sequence[Any]], modes: Sequence[str],
                 flush: torch.Tensor | None, keep: Callable[[int, Sequence[Any], list[Any]], Any] | None,
                 lates: list[float] | None, flushes: list[float] | None, burst_cycles: int,
                 starved: list[bool] | None = None) -> tuple[list[float], list[Any]]:
    """:func:`run_round`'s burst round (CUDA): the host queues the whole round while the GPU busy-waits, so the GPU
    runs it without waiting for the host, and the round's wall time is its GPU work plus one wake-up -- provided the
    busy-wait outlasts the queueing (``starved`` says when it did not)."""
    events: list[tuple[Any, Any, Any]] = []
    kept: list[Any] = []
    torch.cuda._sleep(burst_cycles)
    awake = torch.cuda.Event()
    awake.record()
    for index, mode in enumerate(modes):
        inputs = input_sets[index]
        try:
            flushing, start, end = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            flushing.record()
            if flush is not None:
                flush.zero_()
            start.record()
            out = call_model(model, inputs, mode)
            end.record()
        except BaseException as exc:  # noqa: BLE001 - the candidate's failure is data for the judge
            raise CallFailed(index, exc) from None
        events.append((flushing, start, end))
        kept.append(keep(index, inputs, out) if keep is not None else out)
        del inputs, out
    if starved is not None:
        starved.append(bool(awake.query()))  # the GPU got past the busy-wait before the host got to the end
    try:
        torch.cuda.synchronize()
    except BaseException as exc:  # noqa: BLE001 - a fault in a queued call surfaces here
        raise CallFailed(len(modes) - 1, exc) from None
    times = [start.elapsed_time(end) for _, start, end in events]
    if lates is not None:
        lates.extend(0.0 for _ in events)
    if flushes is not None:
        flushes.extend(flushing.elapsed_time(start) if flush is not None else 0.0 for flushing, start, _ in events)
    return times, kept


#: Burst rounds (``EvalConfig.timing_burst_cycles``): after a round whose busy-wait ended before the host had queued
#: it (:func:`run_round`'s ``starved``), the busy-wait doubles for the rounds after it, up to this many times the
#: configured one and :data:`BURST_MAX_CYCLES` (the judge runs a starved warm-up round again). x64 of 10**7 cycles
#: is ~0.3 s per round on an H200.
BURST_GROWTH_CAP, BURST_MAX_CYCLES = 64, 10**9


def grown_burst(cycles: int, configured: int) -> tuple[int, bool]:
    """The busy-wait for the rounds after a starved one, and whether it grew (not past :data:`BURST_GROWTH_CAP` x
    ``configured``). Both sides' rounds use it, so the busy-wait stays out of the gap between their wall times."""
    if cycles * 2 > max(configured, min(configured * BURST_GROWTH_CAP, BURST_MAX_CYCLES)):
        return cycles, False
    return cycles * 2, True


def unaccounted_verdict(hidden_round_ms: float, per_round: int, slack_round_ms: float, flag_call_ms: float | None
                        ) -> tuple[float, bool]:
    """What the judge does with a round's median unaccounted wall time (``hidden_round_ms``: the candidate's round
    overhead beyond the reference's): ``(charge_ms_per_call, mismatch)``.

    Within ``slack_round_ms`` nothing happens. With ``flag_call_ms`` (GPU) the excess is charged to every call, and
    only an excess over ``flag_call_ms`` per call is a mismatch: the wall clock cannot tell a candidate's host work
    from GPU time it hid, but either way the time passed. Without it (CPU: calls are synchronous, so the loop's
    overhead is stable) any excess is a mismatch. A non-finite value (times claimed beyond the wall) always is.
    """
    if not math.isfinite(hidden_round_ms):
        return 0.0, True
    excess_call_ms = max(0.0, hidden_round_ms - slack_round_ms) / max(per_round, 1)
    if flag_call_ms is None:
        return 0.0, excess_call_ms > 0.0
    return excess_call_ms, excess_call_ms > flag_call_ms


#: Most timed rounds on CPU (one call each by default): a second and third only while the median of the rounds'
#: unaccounted time is over the slack. A busy host's hiccup in one round is not a cheat (an honest candidate was
#: ``hacked: timing_mismatch`` when a test beside it loaded a 2-core CI host, 2026-12-02); time hidden from the
#: reported times is in every round.
CPU_MAX_ROUNDS = 3


def cpu_rounds_done(gaps: Sequence[float], per_round: int, slack_round_ms: float) -> bool:
    """After a CPU timing round: whether the rounds so far decide (their median unaccounted time is within the slack,
    or :data:`CPU_MAX_ROUNDS` have run); the verdict itself is :func:`unaccounted_verdict` on that median."""
    if len(gaps) >= CPU_MAX_ROUNDS:
        return True
    return not unaccounted_verdict(statistics.median(gaps), per_round, slack_round_ms, None)[1]


#: How much longer than the reference's a candidate's L2 flushes (``flushing -> start``) may typically take: a GPU-only
#: interval of a fixed kernel, with no host latency in it. On an H200 (2026-12-03, ``benchmarks/timing_noise.py``, 24
#: rounds of 100 calls) honest candidates' median flush was within -0.004..+0.0015 ms of the reference's (0.117 ms),
#: a side-stream kernel's +0.008 ms on a quiet host and +0.06-0.07 ms on a busy one. More than this means its calls
#: ran work during the flush, before ``start`` (a stream that never waits for the current one), charged then
#: (:func:`flushed_times`).
FLUSH_SLACK_MS = 0.003


def charged_times(times: Sequence[float], extras: Sequence[float], ref_extras: Sequence[float],
                  slack_ms: float) -> tuple[list[float], float]:
    """``times`` with each call's ``extra`` beyond the reference's median added, when the candidate's median
    ``extra`` exceeds the reference's by more than ``slack_ms``; and that excess (ms). Decided on medians of both
    sides, never per call (one call's host latency is noisy); a candidate doing it in fewer than half of its calls
    moves neither median: its typical call (what the speedup uses) is a whole one."""
    if not extras or not ref_extras:
        return list(times), 0.0
    baseline = statistics.median(ref_extras)
    excess = statistics.median(extras) - baseline
    if excess > slack_ms:
        return [t + max(0.0, extra - baseline) for t, extra in zip(times, extras)], excess
    return list(times), excess


def flushed_times(times: Sequence[float], flushes: Sequence[float], ref_flushes: Sequence[float]
                  ) -> tuple[list[float], float]:
    """The candidate's call times with work run during the L2 flush charged: each call's ``flushing -> start`` beyond
    the reference's median, when its median exceeds the reference's by more than :data:`FLUSH_SLACK_MS`. The flush
    is the same kernel on both sides; a longer one shared the GPU with the candidate's work."""
    return charged_times(times, flushes, ref_flushes, FLUSH_SLACK_MS)


def settled_times(times: Sequence[float], lates: Sequence[float], ref_lates: Sequence[float]) -> tuple[list[float], float]:
    """The candidate's call times with left-running work charged, and by how much its calls typically settled later
    than the reference's (``median(lates) - median(ref_lates)``, ms).

    When that excess is over :data:`SETTLE_SLACK_MS` the calls left work running on other streams or threads
    (an honest call leaves none: its ``end -> settled`` is the same host latency as the reference's), and every call
    is charged its ``end -> settled`` beyond the reference's typical host latency: the work it left running, not the
    host's wake-up, which the reference's ``start -> end`` times do not carry either (for a kernel of ~0.15 ms the
    wake-up, 0.015-0.08 ms, would be a sizeable unfair share). Otherwise the GPU-only ``start -> end`` times stand.
    A candidate leaving work in fewer than half of its calls moves neither median: its typical call (what the speedup
    uses) is a whole one.
    """
    return charged_times(times, lates, ref_lates, SETTLE_SLACK_MS)


class LazyInputs(Sequence):
    """The input sets of a round, each made from its spec when the loop reaches it (both sides alike)."""

    def __init__(self, module: Any, specs: Sequence[CallSpec], device: torch.device) -> None:
        self.module, self.specs, self.device = module, list(specs), device

    def __len__(self) -> int:
        return len(self.specs)

    def __getitem__(self, index):  # type: ignore[override]
        return make_inputs(self.module, self.specs[index], self.device)


#: Output bytes a timing round may hold at once on one side (the runner keeps every call's outputs until the judge
#: has chosen the one it checks): a round of big outputs has fewer calls (at least 2). Eight evaluations of a
#: problem with 512 MB outputs then hold ~32 GB on a GPU, not ~80 GB.
ROUND_OUTPUT_BYTES = 4 * 2**30


def calls_per_round(preferred: int, output_bytes: int) -> int:
    """Calls in one timing round: ``preferred``, fewer when their outputs would exceed :data:`ROUND_OUTPUT_BYTES`."""
    fit = ROUND_OUTPUT_BYTES // max(output_bytes, 1)
    return max(min(preferred, fit), min(preferred, 2))


# --- digests ------------------------------------------------------------------------------------------------------

_WEIGHTS: dict[tuple[int, str, int], torch.Tensor] = {}

#: Elements a digest reads at a time. Its float64 temporaries are a chunk or two whatever the tensor's size: digests of
#: whole float64 copies (the copy, a masked copy, the weighted product, the absolute values, and float64 weights as
#: long as the tensor) made a level-1 judge's GPU peak ~15x its 512 MB output (H200, 2026-12-03), and every pass
#: they made was per-call work of the trusted loop that a runner rewritten from inside could do cheaper and spend on
#: work outside its reported times (attacker review 14).
DIGEST_CHUNK = 1 << 24
#: How many standard deviations of right answers' errors the +-1-weighted sum may be off (see
#: :func:`reference_digests`): by Hoeffding's inequality an answer within ``allclose`` everywhere, whose errors do not
#: follow the weights, is off by more with probability below 2 exp(-50).
WEIGHTED_SIGMAS = 10.0


def _weights(numel: int, device: torch.device, seed: int) -> torch.Tensor:
    """A fixed pseudo-random +-1 vector per size, device and seed, as int8 (a byte per element; made float64 a chunk
    at a time); cached (both sides pay once). It runs the tensor's whole length: weights repeating per chunk made an
    input with two chunks swapped digest exactly as the original (attacker review 15). On CUDA they are the CUDA
    digest kernel's own (:func:`drk.gym.digest_kernel.hashed_signs`, a hash of each position, drawn a chunk at a
    time), so its NaN/inf path weights as the kernel does; elsewhere a generator's draw (the hash in torch ops costs
    ~2.7 s per 16M elements on one CPU thread, the generator 0.06 s)."""
    key = (numel, str(device), seed)
    if key not in _WEIGHTS:
        if len(_WEIGHTS) > 16:
            _WEIGHTS.clear()
        if device.type == "cuda":
            parts = [digest_kernel.hashed_signs(lo, min(DIGEST_CHUNK, numel - lo), seed, device)
                     for lo in range(0, numel, DIGEST_CHUNK)]
            _WEIGHTS[key] = torch.cat(parts) if parts else torch.empty(0, dtype=torch.int8, device=device)
        else:
            gen = torch.Generator(device=device)
            gen.manual_seed(seed)
            bits = torch.randint(0, 2, (numel,), generator=gen, device=device, dtype=torch.int8)
            _WEIGHTS[key] = bits * 2 - 1
    return _WEIGHTS[key]


def _chunks(flat: torch.Tensor, w: torch.Tensor):
    """``(x, weights)`` per :data:`DIGEST_CHUNK` elements of ``flat``, both float64 copies of the chunk."""
    for lo in range(0, flat.numel(), DIGEST_CHUNK):
        x = flat[lo:lo + DIGEST_CHUNK].to(torch.float64)
        yield x, w[lo:lo + x.numel()].to(torch.float64)


def _chunk_sums(x: torch.Tensor, wx: torch.Tensor) -> torch.Tensor:
    """Sum, +-1-weighted sum, sum of absolute values and sum of squares of one chunk."""
    return torch.stack([x.sum(), torch.dot(x, wx), torch.linalg.vector_norm(x, 1), torch.dot(x, x)])


def _fast_sums(flat: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """:func:`_chunk_sums` over the whole tensor, in float64. Right only when every element is finite, which a
    finite sum of absolute values shows (:func:`_masked_sums` otherwise)."""
    parts = [_chunk_sums(x, wx) for x, wx in _chunks(flat, w)]
    return torch.stack(parts).sum(0) if parts else torch.zeros(4, dtype=torch.float64, device=flat.device)


def _masked_sums(flat: torch.Tensor, w: torch.Tensor) -> list[float]:
    """The four sums over the finite elements only (the rest digested apart by :func:`_nonfinite_digest`)."""
    total = torch.zeros(4, dtype=torch.float64, device=flat.device)
    for x, wx in _chunks(flat, w):
        total += _chunk_sums(torch.where(torch.isfinite(x), x, 0.0), wx)
    return total.cpu().tolist()


@contextlib.contextmanager
def _one_thread_if(on_cpu: bool):
    """CPU digests on one thread: their rounding depends on the thread count, and the input digests of the judge and
    the runner (which run with different thread counts) must agree exactly."""
    threads = torch.get_num_threads()
    if on_cpu:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if on_cpu:
            torch.set_num_threads(threads)


@dataclass
class PendingDigests:
    """Digests whose sums are queued on the device and not yet read back (:func:`start_digests`); reading them back
    waits for the device, so a burst round (:func:`run_round` with ``burst_cycles``) starts every call's and
    finishes them all (:func:`finish_digests`) after its one synchronise. Holds the tensors until then (the rare
    NaN/inf pass reads them again)."""

    records: list[dict[str, Any]]
    tensors: list[tuple[torch.Tensor, torch.Tensor]]  # (flat values, their four sums on the device)
    seed: int
    on_cpu: bool
    #: per value, ``(atol, rtol, numel, moved)`` for a reference's digest (:func:`start_reference_digests`), else None
    tolerances: list[tuple[float, float, int, tuple[float, int, float] | None] | None] | None = None


def start_digests(values: Sequence[Any], seed: int) -> PendingDigests:
    """The first half of :func:`digest_values`: records and the sums queued, nothing read back."""
    records, tensors = [], []
    on_cpu = any(isinstance(v, torch.Tensor) and v.device.type == "cpu" for v in values)
    with _one_thread_if(on_cpu):
        for value in values:
            if isinstance(value, torch.Tensor):
                flat = value.detach().reshape(-1)
                if flat.is_complex():
                    flat = torch.view_as_real(flat).reshape(-1)
                if flat.device.type == "cuda" and flat.dtype in digest_kernel.KERNEL_DTYPES:
                    tensors.append((flat, digest_kernel.fused_sums(flat, seed)))  # one read, no copies
                else:
                    tensors.append((flat, _fast_sums(flat, _weights(flat.numel(), flat.device, seed))))
                records.append({"dtype": str(value.dtype).removeprefix("torch."), "shape": list(value.shape)})
            else:
                records.append(wire.scalar_meta(value))
    return PendingDigests(records, tensors, seed, on_cpu)


def finish_digests(pending: PendingDigests) -> list[dict[str, Any]]:
    """The second half of :func:`digest_values` (and of :func:`reference_digests`): the sums read back (this waits
    for the device), the NaN/inf pass where one is needed, and a reference's bounds."""
    tensors, seed = pending.tensors, pending.seed
    with _one_thread_if(pending.on_cpu):
        sums = torch.stack([t[1].cpu() for t in tensors]).tolist() if tensors else []
        # a non-finite sum of absolute values means NaN or infinite elements (rare: a second pass only then): the
        # sums over the finite ones, and their counts and +-1-weighted counts per kind, since right answers
        # (allclose with equal_nan) have them at the same places
        nonfinite = []
        for (flat, _), row in zip(tensors, sums):
            if math.isfinite(row[2]):
                nonfinite.append(None)
            else:
                w = _weights(flat.numel(), flat.device, seed)
                row[:] = _masked_sums(flat, w)
                nonfinite.append(_nonfinite_digest(flat, w))
    records = pending.records
    it, extra = iter(sums), iter(nonfinite)
    tolerances = iter(pending.tolerances or [None] * len(records))
    for record, tolerance in zip(records, tolerances):
        if "dtype" in record:
            plain, weighted, absolute, squares = next(it)
            record["sums"] = [s if math.isfinite(s) else str(s) for s in (plain, weighted)]
            record["abs"] = absolute if math.isfinite(absolute) else str(absolute)
            record["sq"] = squares if math.isfinite(squares) else str(squares)
            special = next(extra)
            if special is not None:
                record["nonfinite"] = special
            if tolerance is not None:
                _add_bounds(record, *tolerance)
    pending.tensors = []  # the values are no longer needed
    return records


def digest_values(values: Sequence[Any], seed: int) -> list[dict[str, Any]]:
    """Per value: dtype, shape and two float64 sums (plain and +-1-weighted) of a tensor, or the scalar itself
    (and the sums of absolute values and of squares, which size the tolerance of a reference's digest:
    :func:`reference_digests`).

    On CPU the sums are taken on one thread (:func:`_one_thread_if`). There the work is a float64 copy of the tensor
    and of its weights and four reductions per :data:`DIGEST_CHUNK` elements; on CUDA it is one read of the tensor
    (:mod:`drk.gym.digest_kernel`: the same weights, so the same sums to float64 rounding). NaN and infinite
    elements (a second pass, only where there are any) are digested apart. :func:`start_digests` and
    :func:`finish_digests` are its two halves, for a round that reads every call's sums back at once.
    """
    return finish_digests(start_digests(values, seed))


def _nonfinite_digest(flat: torch.Tensor, w: torch.Tensor) -> list[float]:
    """Counts and +-1-weighted counts of NaN, +inf and -inf elements (exact in float64)."""
    total = torch.zeros(6, dtype=torch.float64, device=flat.device)
    for x, wx in _chunks(flat, w):
        masks = (torch.isnan(x), torch.isposinf(x), torch.isneginf(x))
        total += torch.stack([v for m in masks
                              for v in (m.sum().to(torch.float64), torch.dot(m.to(torch.float64), wx))])
    return total.cpu().tolist()


def reference_digests(values: Sequence[Any], seed: int, atol: float, rtol: float,
                      moved: Moved | None = None) -> list[dict[str, Any]]:
    """:func:`digest_values` of trusted outputs, with how far a right answer's sums can be from them: what the judge
    keeps of a call instead of the outputs.

    An answer ``allclose`` to the reference's has errors ``|e_i| <= t_i = atol + rtol * |ref_i|``. Its plain sum is
    within ``sum t_i`` (``bound``: the worst case, errors all of one sign). Its +-1-weighted sum is within
    :data:`WEIGHTED_SIGMAS` x ``sqrt(sum t_i^2)`` (``wbound``, or the worst case where that is smaller: a few
    elements) except with probability below 2 exp(-50), since its errors do not follow the weights; held to the
    worst case too, a constant at the outputs' mean passed (attacker review 15). Both with room for float64
    rounding. With ``moved`` (a sparse hidden set's, :class:`drk.gym.correctness.Moved`), ``atol`` holds at the
    elements it marks and ``moved.unmoved_atol`` at the others, so that errors confined to the outliers are not lost
    in every other element's tolerance (attacker review 23, F2)."""
    return finish_digests(start_reference_digests(values, seed, atol, rtol, moved))


def start_reference_digests(values: Sequence[Any], seed: int, atol: float, rtol: float,
                            moved: Moved | None = None) -> PendingDigests:
    """The first half of :func:`reference_digests` (:func:`finish_digests` is the second)."""
    pending = start_digests(values, seed)  # the same work as the runner's digests: equal overheads on both sides
    # a complex tensor is digested as its real and imaginary parts: twice its elements' count of values, each
    # compared at the tolerance (its bound at one per element was half what a right answer may need: review 24)
    pending.tolerances = [(*tolerance_for(v, atol, rtol), _digested_count(v), _moved_part(moved, i, v))
                          if isinstance(v, torch.Tensor) else None for i, v in enumerate(values)]
    return pending


def _digested_count(value: torch.Tensor) -> int:
    """How many values a tensor's digest sums: a complex tensor's real and imaginary parts each."""
    return value.numel() * (2 if value.is_complex() else 1)


def _moved_part(moved: Moved | None, index: int, value: torch.Tensor) -> tuple[float, int, float] | None:
    """``(atol elsewhere, moved elements, their absolute sum)`` of output ``index`` (None: one atol for all)."""
    if moved is None or index >= len(moved.numels) or moved.numels[index] != _digested_count(value) \
            or not (value.is_floating_point() or value.is_complex()):
        return None
    return moved.unmoved_atol, moved.counts[index], moved.abs_sums[index]


def _add_bounds(record: dict[str, Any], a: float, r: float, numel: int,
                moved: tuple[float, int, float] | None = None) -> None:
    """A reference digest's ``bound`` and ``wbound`` (:func:`reference_digests`) for a tensor of ``numel``
    elements compared at tolerances ``a``, ``r`` (with ``moved``: ``a`` only at that many elements, whose absolute
    sum is given, and a smaller atol at the rest)."""
    abs_sum = record["abs"] if isinstance(record["abs"], float) else math.inf
    squares = record["sq"] if isinstance(record["sq"], float) else math.inf
    # integers sum exactly in float64 below 2**53: no room then, or an answer off by one on a few of a large
    # output's elements would fit in it
    rounding = 0.0 if a == r == 0.0 and abs_sum < 2.0**53 else 1e-9 * (1 + abs_sum)
    # sum_i t_i and sum_i t_i^2 for t_i = a_i + r |x_i|, a_i = a at the moved elements and `base` at the rest
    base, count, moved_abs = (min(moved[0], a), min(moved[1], numel), moved[2]) if moved else (a, numel, abs_sum)
    record["bound"] = base * numel + (a - base) * count + r * abs_sum + rounding
    spread = (base * base * numel + (a * a - base * base) * count + 2 * r * (base * abs_sum + (a - base) * moved_abs)
              + r * r * squares)
    record["wbound"] = min(record["bound"], WEIGHTED_SIGMAS * math.sqrt(spread) + rounding)  # small n


#: Elements per output tensor the judge compares after each timed round (beside every call's digests).
SAMPLE_ELEMENTS = 1 << 16


def sample_indices(numel: int, seed: int, k: int = SAMPLE_ELEMENTS) -> torch.Tensor | None:
    """``k`` flat positions drawn from ``seed`` (the same in the judge and the runner), or None: take all."""
    if numel <= k:
        return None
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, numel, (k,), generator=generator)


def layout_of(values: Sequence[Any]) -> list[Any]:
    """Each tensor of ``values`` as an empty tensor of its dtype and shape on the ``meta`` device (no memory),
    other values as they are: what a read of a runner's outputs must match when only a sample is compared."""
    return [torch.empty(v.shape, dtype=v.dtype, device="meta") if isinstance(v, torch.Tensor) else v for v in values]


def sample_masks(masks: Sequence[torch.Tensor | None], values: Sequence[Any], seed: int) -> list[Any]:
    """Moved-element masks (:class:`drk.gym.correctness.Moved`) at the positions :func:`sample_values` takes of
    ``values`` (the outputs they mark, or those outputs sampled: only their dtypes count). A complex output's mask
    marks its real and imaginary parts, two per element, and is sampled in pairs: sampled as one flat mask its
    positions were not the output's and its size not twice the sample's, so the scaled atol held everywhere."""
    out: list[Any] = []
    for i, mask in enumerate(masks):
        if mask is None:
            out.append(None)
            continue
        value = values[i] if i < len(values) else None
        pairs = isinstance(value, torch.Tensor) and value.is_complex() and mask.numel() % 2 == 0
        flat = mask.reshape(-1, 2) if pairs else mask.reshape(-1)
        idx = sample_indices(flat.shape[0], seed + i)
        out.append((flat if idx is None else flat[idx.to(flat.device)]).reshape(-1))
    return out


def sample_values(values: Sequence[Any], seed: int) -> list[Any]:
    """The elements of every tensor in ``values`` at :func:`sample_indices` (other values unchanged): a round's
    output checked element by element at positions chosen after the round, without moving it whole."""
    out = []
    for i, value in enumerate(values):
        if isinstance(value, torch.Tensor):
            flat = value.detach().reshape(-1)
            idx = sample_indices(flat.numel(), seed + i)
            value = flat if idx is None else flat[idx.to(flat.device)]
        out.append(value)
    return out
