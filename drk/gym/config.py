"""Evaluation settings: one validated dataclass, recorded in every result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

REFERENCE_MODES = ("eager", "compile")
TIMING_POLICIES = ("drk", "authors")


@dataclass(frozen=True)
class EvalConfig:
    """How a candidate is judged.

    Defaults follow the paper's KernelGYM where it is sound (5 correctness trials, atol = rtol = 1e-2) and fix
    it where it is not (L2 flush, medians, interleaved timing: the ``"drk"`` timing policy).
    """

    #: Number of fresh, differently seeded input sets the candidate must match the reference on.
    correctness_trials: int = 5
    #: ``torch.allclose`` tolerances (the paper's 1e-2 both).
    atol: float = 1e-2
    rtol: float = 1e-2
    #: Untimed calls of each model before timing (GPU).
    warmup: int = 10
    #: Timed calls of each model (GPU); interleaved reference/candidate.
    timing_trials: int = 100
    #: Wall-clock limit for the candidate: from the moment its code is given to its runner to the verdict, all its
    #: processes included. The judge's own work before (the reference, a runner's start-up) is not counted.
    timeout_s: float = 180.0
    #: ``"eager"`` times the PyTorch reference as written; ``"compile"`` times ``torch.compile(reference)``
    #: (Table 2 of the paper). Correctness is always checked against eager outputs.
    reference_mode: Literal["eager", "compile"] = "eager"
    #: ``"drk"``: L2 flush before every timed call, fresh rotating inputs, medians. ``"authors"``: the paper
    #: code's policy (no flush, same inputs, mean of ``timing_trials``), so numbers can be compared with theirs.
    timing_policy: Literal["drk", "authors"] = "drk"
    #: Measure the profiling ratio with ``torch.profiler`` (GPU; on CPU one call under the autograd profiler, for
    #: the check of the profiled call's output only). ``False`` also spares the candidate's runner
    #: the profiler's warm-up (CUPTI's start-up, ~5 s of host time per runner on a busy H200 host), for uses that
    #: do not need PR (Fast@p, rewards without the profiling term).
    profile: bool = True
    #: Judge hacking. ``False`` reproduces the paper's "without hacking check" ablation: evidence is still gathered
    #: and recorded in ``hack_reasons``, but no verdict is ``hacked`` and such candidates are timed like any other.
    hacking_check: bool = True
    #: Base seed; per-trial seeds are derived from it and recorded.
    seed: int = 0
    #: Timed calls per round on CPU (interpreter timing is reported, never as a GPU speedup; up to three rounds).
    #: Every timed call is checked by digest, and a rewritten runner's constant at the outputs' mean passes one
    #: call's weighted digest about one time in seven (relu2 at CPU size): with one call per round it was
    #: ``correct`` in a run whose timing stopped after one round (session 30); three calls make that ~0.3 %.
    cpu_timing_trials: int = 3
    #: Size of the buffer zeroed before each timed call to flush L2 (the H200's L2 is 60 MB).
    l2_flush_mb: int = 512
    #: Bytes of the candidate's reply kept at most; longer replies are a format error (protects the parser).
    max_source_chars: int = 200_000
    #: On CPU the judge reads the candidate's outputs from its memory itself, its processes stopped
    #: (:mod:`drk.gym.direct_reads`), where the machine lets it. ``False`` asks the candidate's runner for them
    #: instead, as on a GPU, where a runner rewritten to answer with values its kernel never produced passes
    #: (``attack_lazy_fetch``): for tests of that path, never for RL.
    direct_reads: bool = True
    #: Candidate sandbox: ``"auto"`` (the strongest that works here: another uid + namespaces as root, namespaces
    #: otherwise), ``"uid"``, ``"namespace"``, or ``"process"`` (no sandbox: only for trusted code, never for RL).
    isolation: Literal["auto", "uid", "namespace", "process"] = "auto"
    #: Also check hidden input sets whose distribution differs from ``get_inputs`` (scaled, sign-flipped, shifted;
    #: integer inputs too where the reference accepts them changed: ``rounds.perturb_integers``).
    hidden_inputs: bool = True
    #: Chance, per slot between a timing round's calls (warm-up included), that the judge inserts a call on one of
    #: the hidden sets' input distributions, checked like every timed call and left out of both sides' timing
    #: samples. A kernel exact in every correctness call and specialised to ``get_inputs()``' distribution after
    #: them (it can count its calls) escaped the hidden sets (attacker review 21); now each call it answers with its
    #: shortcut risks one. At 0.3, ~36 inserted calls per GPU evaluation (10 rounds of 10); a kernel that only one of
    #: the four sets catches and that took its shortcut in the 50 calls a median needs escapes ~1.6 % of evaluations
    #: (32 of 2000 simulated schedules). Integers are perturbed where a CPU copy of the reference accepts each call's
    #: values (checked before the timing). 0 switches them off (and with ``hidden_inputs=False`` there are none).
    timing_hidden_rate: float = 0.3
    #: Timed calls per round (GPU): the judge bounds each round of the candidate's calls with its own clock.
    timing_round_calls: int = 10
    #: Rounds of the problem's reference that the candidate's runner runs through its own timing loop before the
    #: candidate is loaded (after one warm-up): the judge learns what that loop costs beyond the per-call times on
    #: trusted code (``EvalResult.unaccounted_calibrated_ms``, reported only). 0, the default, switches it off: it
    #: holds the GPU exclusively twice per evaluation (the candidate's runner and the probe runner), and a Pool's
    #: throughput is bounded by those sections (calibration averaged 2.4 s of a mini2 evaluation's wall time in a
    #: Pool of 8 on an H200, 0.2-0.5 s alone, 2026-12-01). Switch it on to study the timing bound.
    calibration_rounds: int = 0
    #: Wall milliseconds per timed call that the candidate's process may need beyond its reported time and the
    #: reference's own overhead (pipe round trip, load from other evaluations); more, as the median over rounds, is
    #: charged to its time on the GPU (see ``timing_flag_ms``) and ``hacked: timing_mismatch`` on CPU. Honest kernels measured 0.03-0.17 ms/call with 8 evaluations sharing an H200:
    #: this is also the most work per call a candidate could hide from its times. GPU, and CPU (interpreter) below.
    timing_slack_ms: float = 0.3
    cpu_timing_slack_ms: float = 50.0
    #: GPU: wall milliseconds per timed call beyond the slack that are *charged* to the candidate's time rather than
    #: judged: past this many (per call, beyond the slack) the timing is ``hacked: timing_mismatch``. A host-bound
    #: loop's unaccounted time grows with the candidate's host work and shrinks with its GPU time, so honest fast or
    #: launch-heavy candidates exceeded the slack under load (44 of 155 honest rows, H200, a Pool of 8, 2026-12-01):
    #: they pay for the excess instead of being called cheats, and a clock that under-reports gains at most the slack.
    timing_flag_ms: float = 2.5
    #: GPU: wall milliseconds per timing round allowed for the two requests and answers crossing the pipes (``go``
    #: and the sampled ``fetch``; the judge's own rounds have none), beside ``timing_slack_ms`` per call. Without a
    #: per-round term, 2 of 279 honest evaluations in a 4-worker H200 run were flagged (synced rounds).
    timing_round_slack_ms: float = 2.0
    #: GPU: 0 (default) times each call on its own (synchronised after every call: the loop the evaluation's
    #: precision and verdicts were measured with). More: *burst rounds*, an experiment: on both sides a round's calls are queued back to back behind this many GPU cycles of busy-wait
    #: (``torch.cuda._sleep``) and synchronised once, its digests read back after, so the judge's clock over a
    #: round is the GPU's work plus one host wake-up. Measured outside the evaluation
    #: (``benchmarks/burst_bound.py``, H200): honest candidates' unaccounted time per call within 0.002-0.004 ms of
    #: the reference's behind 10**7 cycles on a busy host, where synced rounds vary by 0.1-0.2 ms; meant to be used
    #: with much smaller ``timing_slack_ms`` and ``timing_round_slack_ms`` (their values for it are not measured).
    #: Work left running on other streams is then in the wall time only (``settle_excess_ms`` stays 0). In an
    #: evaluation on an H200 (session 28) honest kernels were charged 0.13-0.29 ms per call, the runner's per-round
    #: pipe cost, and the forged clock 0.28-0.33: not yet a separation (docs/environment.md, "Burst rounds").
    timing_burst_cycles: int = 0
    #: Bytes of output data one answer of the candidate's process may carry (a flood is a runtime error).
    max_output_bytes: int = 4 * 2**30

    def __post_init__(self) -> None:
        if self.correctness_trials < 2:
            raise ValueError(
                f"correctness_trials={self.correctness_trials}: need >= 2 (one eval/no-grad and one train/grad pass)"
            )
        if self.atol < 0 or self.rtol < 0:
            raise ValueError(f"atol/rtol must be >= 0, got atol={self.atol}, rtol={self.rtol}")
        if self.warmup < 0 or self.timing_trials < 1 or self.cpu_timing_trials < 1:
            raise ValueError("warmup must be >= 0 and timing_trials, cpu_timing_trials >= 1")
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s}")
        if self.reference_mode not in REFERENCE_MODES:
            raise ValueError(f"reference_mode={self.reference_mode!r}: choose one of {REFERENCE_MODES}")
        if self.timing_policy not in TIMING_POLICIES:
            raise ValueError(f"timing_policy={self.timing_policy!r}: choose one of {TIMING_POLICIES}")
        if self.isolation not in ("auto", "uid", "namespace", "process"):
            raise ValueError(f"isolation={self.isolation!r}: choose auto, uid, namespace or process")
        if self.calibration_rounds < 0:
            raise ValueError(f"calibration_rounds must be >= 0, got {self.calibration_rounds}")
        if self.timing_round_calls < 1 or self.timing_slack_ms < 0 or self.cpu_timing_slack_ms < 0 \
                or self.timing_flag_ms < 0 or self.timing_round_slack_ms < 0:
            raise ValueError("timing_round_calls must be >= 1 and the timing slacks and timing_flag_ms >= 0")
        if self.timing_burst_cycles < 0:
            raise ValueError(f"timing_burst_cycles must be >= 0, got {self.timing_burst_cycles}")
        if not 0.0 <= self.timing_hidden_rate <= 1.0:
            raise ValueError(f"timing_hidden_rate must be in [0, 1], got {self.timing_hidden_rate}")
        if self.l2_flush_mb < 0:
            raise ValueError(f"l2_flush_mb must be >= 0, got {self.l2_flush_mb}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalConfig:
        """Build from a dict; unknown keys are an error (a typo must not silently do nothing)."""
        return cls(**check_known_keys(cls, data))


def check_known_keys(cls, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` unchanged, or a ValueError naming the unknown keys and the valid ones (for every config class)."""
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"unknown {cls.__name__} keys {unknown}; valid keys: {sorted(known)}")
    return dict(data)
