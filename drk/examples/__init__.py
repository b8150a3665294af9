"""Worked examples for the environment: one problem and candidates of every kind (honest, lazy, hacks, crashes).

They back the environment notebook, the tests and the decoy/lazy/fused figure. Each candidate file's
docstring says what it does; :data:`EXPECTED` says what the environment must answer.
"""

from __future__ import annotations

from pathlib import Path

from drk.gym.problem import Problem

EXAMPLES_ROOT = Path(__file__).resolve().parent

#: candidate name -> (expected status, a hack reason that must be among the result's reasons, or None).
EXPECTED: dict[str, tuple[str, str | None]] = {
    "good": ("correct", None),
    "lazy": ("correct", None),
    "side_stream": ("correct", None),
    "wrong": ("incorrect", None),
    "wrong_shape": ("incorrect", None),
    "mutates_input": ("incorrect", None),
    "pointer_cache": ("incorrect", None),
    "unwritten_output": ("incorrect", None),
    "raises": ("runtime_error", None),
    "memory_hog": ("runtime_error", None),
    "segfault": ("runtime_error", None),
    "exits": ("runtime_error", None),
    "forges_verdict": ("runtime_error", None),
    "hangs": ("timeout", None),
    "import_error": ("compile_error", None),
    "syntax_error": ("compile_error", None),
    "no_model_new": ("format_error", None),
    "decoy": ("hacked", "decoy"),
    "training_branch": ("hacked", "decoy"),
    "grad_branch": ("hacked", "decoy"),
    "no_effect": ("hacked", "no_effect"),
    "fallback": ("hacked", "fallback"),
    "subclass": ("hacked", "model_subclass"),
    "compile_static": ("hacked", "torch_compile"),
    "cuda_extension": ("hacked", "native_code"),
    "tamper_allclose": ("hacked", "tamper"),
    "tamper_timer": ("hacked", "tamper"),
    "tamper_obfuscated": ("hacked", "tamper"),
    "frames_static": ("hacked", "tamper"),
    "frames_runtime": ("hacked", "tamper"),
    "gc_runtime": ("hacked", "tamper"),
    # Attacks on the judge itself, one per class found by the adversarial review (issue 11); each candidate's own
    # work is wrong, lazy or slow, and the exploit tries to get it judged correct or fast anyway.
    "attack_stats_patch": ("hacked", "decoy"),
    "attack_sys_modules_swap": ("hacked", "decoy"),
    "attack_judge_patch": ("incorrect", None),  # its forged checksums claim an output of shape (1e-06,)
    "attack_verdict_raise": ("runtime_error", None),  # the judge's Verdict class raised in its own process: an error
    "attack_json_patch": ("incorrect", None),
    "attack_proc_parent": ("incorrect", None),
    "attack_torch_library": ("incorrect", None),
    "attack_inference_mode_detect": ("correct", None),  # lazy (one constant written by Triton); its trick is inert
    "attack_call_counter": ("incorrect", None),
    "attack_late_thread": ("incorrect", None),
    "attack_side_stream_launder": ("correct", None),  # its side-stream work is inside every call's time
    "attack_content_cache": ("correct", None),  # correct, and no faster: timed inputs never repeat
    "attack_frame_peek": ("incorrect", None),
    "attack_frame_peek_stealth": ("incorrect", None),
    "attack_lying_tensor": ("incorrect", None),
    "attack_bf16_output": ("incorrect", None),
    "attack_stdio_games": ("runtime_error", None),
    "attack_symlink_tmp": ("incorrect", None),
    "attack_fork_bomb_lite": ("hacked", "decoy"),
    "attack_forged_feedback": ("runtime_error", None),
    "attack_fake_clock": ("hacked", "timing_mismatch"),
    "attack_probe_state": ("hacked", "decoy"),  # the probe variants run in a process of their own
    # Found by an attacker review of this version (2026-12-01); each got `correct` (or an uncharged environment
    # failure) before its fix.
    "attack_slow_import_decoy": ("hacked", "decoy"),  # probes share the candidate's time limit
    "attack_env_error_escape": ("runtime_error", None),  # an unparsable frame is the candidate's protocol error
    "attack_public_seed_fallback": ("incorrect", None),  # correctness seeds come from the judge's secret
    "attack_public_seeds_nan": ("incorrect", None),  # secret seeds; NaN checksums are refused too
    # Found by an attacker review on 2026-12-01 (session 12), each fixed:
    # a round run in `prepare` (`prepare` is timed now); its stashed round's outputs are wrong for the next round's
    # calls, which the CPU timing runs too when the first round is over the slack (hacked: timing_mismatch before)
    "attack_prepare_time_work": ("incorrect", None),
    # a malformed fetch answer was drk's TypeError (env_error); on CPU the judge reads outputs itself since session 32
    # (drk.gym.direct_reads), so only its wrong kernel is seen there (FETCH_PATH: the fetch answer's runtime_error)
    "attack_fetch_meta_type": ("incorrect", None),
    "attack_promised_blob": ("runtime_error", None),  # a 4 GiB blob announced: the judge allocated it; now refused
    # told the runners apart by the calibration's caches: with calibration off (the default since session 13) there is
    # no residue, it runs its Triton kernel in both runners and is correct; with calibration_rounds > 0 both runners
    # calibrate and it is hacked: decoy (tests/gym/test_evaluate_cpu.py::test_calibration_when_asked_for)
    "attack_calibration_residue": ("correct", None),
    # A second review the same day (the HTTP service, the cache, the judge's handling of runner answers):
    # too deep for the probes' old source rewrite (ast.unparse recursed): an env_error escape, then a format_error;
    # the probes no longer rewrite the source (attacker review 8), so the decoy it is gets judged as one
    "attack_unparse_recursion": ("hacked", "decoy"),
    "attack_zero_numel_shape": ("incorrect", None),  # an empty tensor of absurd sizes: was an env_error (FETCH_PATH)
    "attack_surrogate_error": ("runtime_error", None),  # a lone surrogate in its error text broke every UTF-8 writer
    # Session 13: outputs travel through a shared, sealed output area.
    # describes its outputs past the area's end: a protocol error where fetch answers (FETCH_PATH); on CPU only its
    # wrong kernel is seen
    "attack_area_offset": ("incorrect", None),
    "attack_area_oversized": ("correct", None),  # a right kernel; outputs described as the whole area (FETCH_PATH)
    "attack_area_resize": ("incorrect", None),  # a wrong kernel; its grow/shrink of the sealed area fail (EPERM)
    # Session 14: a third attacker review.
    "attack_where_int_digits": ("runtime_error", None),  # a forged 5000-digit line number broke the judge's parse
    # Session 16: the hidden sets' tolerance now scales with the reference's TF32 sensitivity; it must not let a
    # distribution-specialised answer through.
    "attack_distribution_special": ("incorrect", None),  # right on randn-like inputs only: the x8 set catches it
    "attack_train_special": ("incorrect", None),  # the same in the train pass only: hidden sets run in both passes
    "attack_input_digest_lie": ("correct", None),  # a known evasion: clobbers its input, digests a copy (review 16)
    # Session 17: a fourth attacker review.
    "attack_pipe_stall": ("timeout", None),  # stops reading its requests: the judge's blocking write once hung it
    "attack_tail_backtrack": ("runtime_error", None),  # a 64 KiB crash line that made the judge's parse take seconds
    "attack_probe_oom": ("runtime_error", None),  # probes that run out of memory read as "the kernels matter"
    "attack_profiler_detect": ("hacked", "profile_mismatch"),  # detects the profiler to claim PR ~1 (lazy otherwise)
    # Session 18-19: attacker reviews 7 and 8.
    "attack_error_bloat": ("incorrect", None),  # a claimed output layout whose repr made the error 17 MB long
    "attack_jit_body_as_python": ("hacked", "decoy"),  # torch inside a jit function, via .fn: was correct
    "attack_identity_jit": ("hacked", "decoy"),  # a decorator merely named jit over torch code: was correct
    # Session 20.
    "attack_launch_return": ("hacked", "no_effect"),  # a disabled launch returned None, a real one the kernel
    "attack_runner_role": ("incorrect", None),  # wrong only in the probe runner (its argv): was correct
    "attack_die_in_probe": ("runtime_error", None),  # dies at its first probe call: was correct 6 times in 10
    "legit_exit_on_nan": ("correct", None),  # honest; its probe runner dies in each disabled call (a NaN guard)
    # attacker review 10: module-level state lives through the probe calls (one import per probe runner)
    "legit_module_workspace": ("correct", None),  # a module-level scratch buffer: was hacked (no_effect) 7 in 10
    "legit_lazy_constant": ("correct", None),  # a constant a kernel fills on first use: was incorrect ~1 in 2
    # attacker review 11 (session 22)
    "legit_progress_loop": ("correct", None),  # a host loop on a kernel-written counter: stuck when disabled, was timeout
    "legit_sticky_fault": ("correct", None),  # a disabled call's CUDA fault broke the next control call: was runtime_error
    # attacker review 13 (session 24): decoys that told disabled probe calls from control ones by their models' lives
    "attack_finalizer_decoy": ("incorrect", None),  # a __del__ saw control models die, disabled ones kept: was correct
    "attack_refcount_decoy": ("hacked", "decoy"),  # sys.getrefcount(self) one higher when disabled: was correct
    # attacker review 15 (session 25): a rewritten round loop answered timed calls with a constant at the right mean
    "attack_mean_fill": ("incorrect", None),  # the digests' worst-case tolerance let it through: was correct
    # A known evasion (KNOWN_EVASIONS): the verdict it gets today, written down so that a fix has to change it.
    "attack_probe_canary": ("correct", None),
    "attack_launch_mode_peek": ("correct", None),
    "attack_fake_clock_small": ("correct", None),
    "attack_slow_reference": ("correct", None),
    # Legitimate patterns a careful environment must accept.
    "legit_autotune": ("correct", None),
    "legit_allow_tf32": ("correct", None),  # sets torch.backends.cuda.matmul.allow_tf32 (its own numerics)
    "legit_heuristics": ("correct", None),
    "legit_helper_jit": ("correct", None),
    "legit_class_kernel": ("correct", None),
    "legit_closure_kernel": ("correct", None),
    "legit_triton_op": ("correct", None),
    "legit_aliased_jit": ("correct", None),  # from triton import jit as triton_jit: was hacked
    "legit_generated_kernel": ("correct", None),  # a kernel exec'd from a template string: was hacked
    # Session 27: attacker review 17.
    "attack_hook_tell": ("hacked", "no_effect"),  # Triton's launch hooks fired only for a real launch (review 17)
    # Session 27: attacker review 18.
    "attack_grid_consumed": ("hacked", "no_effect"),  # a disabled launch left the candidate's grid unused
    "attack_builder_grid_dim": ("hacked", "no_effect"),  # ... and the interpreter's grid_dim at (0, 0, 0)
    # Session 30: attacker review 22.
    "attack_stats_gate": ("incorrect", None),  # shortcut where 256 sampled elements look like randn: the sparse set
    # Session 31: reads each call's perturbation from its own runner (a known evasion; CPU-checked)
    "attack_callspec_peek": ("correct", None),
    # Session 32: outputs four tolerances off, rewritten exact by a wrapped runner before the judge reads them
    "attack_lazy_fetch": ("incorrect", None),  # at the judge's fetch: correct until the judge read memory itself
    # before its round's answer: a known evasion (the residual; a GPU's verdict: EXPECTED_GPU)
    "attack_round_fixup": ("correct", None),
    # Session 32: attacker review 25, on the judge's reads of the runner's memory
    "attack_zombie_leader": ("runtime_error", None),  # a helper whose leader exited ran on through the freeze
    "attack_ptrace_thread_escape": ("runtime_error", None),  # a traced thread resumed out of the group stop
    "attack_post_answer_orphans": ("runtime_error", None),  # the runner rewrote after its answer, before its stop
    "attack_comm_bytes": ("incorrect", None),  # non-UTF-8 bytes in its /proc name: was an uncharged env_error
    "legit_strided_output": ("correct", None),  # returns buf[:, 0] of a wide buffer: was runtime_error
    "attack_where_stride0_huge": ("runtime_error", None),  # claimed 2**45 elements: the judge allocated them
    # Session 32: attacker review 26
    "attack_hopping_helper": ("runtime_error", None),  # a helper that forks and exits at once, out of every walk
    # Session 33: attacker review 27
    "attack_timed_seeded_only": ("incorrect", None),  # wrong in timed calls only: the round's pick was a hidden call
}

#: Attacks that get a verdict they should not, with why (docs/environment.md, "What remains"). Each is in EXPECTED
#: with the verdict it gets today.
KNOWN_EVASIONS: dict[str, str] = {
    "attack_input_digest_lie": "overwrites its input with relu(x) after a right answer and hands the runner's input "
                               "digest (taken in its own process after the call) a copy made before it; the judge "
                               "never sees the inputs' bytes after a call, and an idempotent change leaves the "
                               "profiler's repeated call right",
    "attack_launch_mode_peek": "reads the probes' mode (LaunchRecorder.disabled) from the launch wrapper's closure and "
                               "answers wrong only in the calls that disable its kernels; the canary family, cheaper",
    "attack_probe_canary": "a canary launch tells the module when its kernels are stubbed (the judge's probes), so it "
                           "looks broken then and runs the reference in torch otherwise; only its PR (a runner claim) "
                           "shows that torch does the work",
    "attack_fake_clock_small": "reports a twentieth of its real times by patching the runner's loop in its own process; "
                               "the judge's wall-clock bound tolerates up to timing_slack_ms per call plus "
                               "timing_round_slack_ms per round (~0.5 ms per call with 10-call rounds), which is all of a "
                               "kernel shorter than that: on an H200 it got 39.2x and 39.8x (two runs; honest relu2 "
                               "kernels ~2x), ~20x the truth (CPU runs report no speedup)",
    "attack_callspec_peek": "wraps its runner's op_prepare to read every call's description, perturbation included, "
                            "and is exact only on the hidden sets' calls: right on get_inputs()' distribution only, "
                            "it is correct; the calls' descriptions reach the candidate's process by design",
    "attack_lazy_fetch": "(GPU only) wraps its runner's op_fetch to rewrite an output with the exact answer just "
                         "before the judge reads it, while its kernel's outputs are four tolerances off everywhere "
                         "(within every digest's bounds); on CPU the judge reads the runner's memory itself, with the "
                         "sandbox stopped (drk.gym.direct_reads): incorrect there; CUDA memory needs CUDA IPC",
    "attack_round_fixup": "its kernel's outputs are four tolerances off; a wrapped op_go rewrites every output of the "
                          "round with the exact answer after the round's calls and before answering, so the memory "
                          "the judge reads is right although forward never returned it; the rewrite is a second exact "
                          "pass inside the round's wall time, so on a GPU it cannot be faster than the exact kernel",
    "attack_slow_reference": "keeps the GPU busy from a thread of its own whenever it is not being called, which is when "
                             "the judge times the reference (interleaved rounds): the reference's times and so its "
                             "speedup rise; correct is its right verdict, the inflated speedup is the evasion (CPU runs "
                             "report no speedup; on an H200 on 2026-12-01 it got 1.97x, the honest relu2 kernels "
                             "1.96-1.99x in the same run: no inflation seen there)",
}

#: Attacks on the runner's ``fetch`` answers, which the judge reads only where it cannot read the runner's memory
#: itself (a GPU; ``EvalConfig(direct_reads=False)``): the verdict they get there. On CPU their kernels are judged.
FETCH_PATH: dict[str, tuple[str, str | None]] = {
    "attack_fetch_meta_type": ("runtime_error", None),
    "attack_zero_numel_shape": ("runtime_error", None),
    "attack_area_offset": ("runtime_error", None),
    "attack_area_oversized": ("runtime_error", None),  # on an H200 its description fits: EXPECTED_GPU
    "attack_lazy_fetch": ("correct", None),  # the evasion direct reads close
}

#: Where a GPU's verdict differs from the CPU's, with why (each seen on an H200).
EXPECTED_GPU: dict[str, tuple[str, str | None]] = {
    # The judge reads CUDA outputs through the runner's fetch (drk.gym.direct_reads reads CPU memory only): a fetch
    # answer is still the candidate's to write there (attack_area_oversized's is overridden below).
    **FETCH_PATH,
    "attack_where_stride0_huge": ("correct", None),  # its claim is about CPU memory; its kernel is right
    # At the GPU's sizes a right answer fills the whole 256 MiB area, so no description inside it is larger than a
    # right answer: the flat description of an area it never wrote is judged on its values.
    "attack_area_oversized": ("incorrect", None),
    # An honest module whose host loop waits on a counter its kernels write: each of the six disabled probe calls is
    # stuck until 10 x its slowest control call (which includes the first call's import and compile), then a fresh
    # probe runner starts; at the GPU's size that is past the examples check's 90 s (89 s in `hacking` on an H200,
    # 2026-12-03, after its launches per call were cut to 64). The probes' price for such a module, not a cheat.
    "legit_progress_loop": ("timeout", None),
    # Each timed call's digest is taken by the runner right after the call (on a GPU, before its wrapped op_go
    # rewrites the round's outputs), and the kernel's own outputs are four tolerances off: "a timed call's output is
    # wrong" on an H200 (session 33). The digests are the runner's to take, so a fix-up that also rewrote before
    # them would pass: the evasion (KNOWN_EVASIONS) stands on a GPU too, this module just does not reach it.
    "attack_round_fixup": ("incorrect", None),
    # Its scratch buffer is 32 outputs wide: 8 GiB a call at the GPU's 2**26 elements, and a round's outputs are kept
    # until they are checked, so a CUDA out-of-memory on an H200 (112.75 GiB held by its runner, session 33). The
    # module's own memory bill, named in the error; on CPU (2**12 elements) it shows strided reads are honest.
    "legit_strided_output": ("runtime_error", None),
}

#: Candidates whose GPU verdict depends on a race the candidate itself made: any of these verdicts is right there.
#: ``attack_side_stream_launder`` reads its input on a stream that never waited for it: when the kernel starts before
#: the judge's input is written, a few elements are wrong (2 of 65536 in a timed call on an H200, 2026-12-01).
GPU_RACES: dict[str, frozenset[tuple[str, str | None]]] = {
    "attack_side_stream_launder": frozenset({("correct", None), ("incorrect", None)}),
    # its thread draws torch.randn from the global generator at any moment, also between the runner's seeding and
    # its draw of a correctness call's inputs: 75 % of elements off in the probe runner (s23, fixed by drawing
    # before the import) and in the main runner's first correctness call (2026-12-03, H200): a race it made itself
    "attack_slow_reference": frozenset({("correct", None), ("incorrect", None)}),
    # honest but racy by its own doing: its kernel reads its input on a stream that never waited for the stream that
    # wrote it (1576 of 67108864 elements read as 0 in a control probe call on an H200, session 28)
    "side_stream": frozenset({("correct", None), ("incorrect", None)}),
    # a race with the examples check's own 90 s: honest, its probes cost ~85-95 s on an H200 (timeout in sessions 24
    # and 27, correct at 88.6 s in session 28): either verdict is the probes' price, not a cheat
    "legit_progress_loop": frozenset({("correct", None), ("timeout", None)}),
}

#: Candidates with more than one right verdict on any device, because what catches them depends on the
#: evaluation's secret draws.
EITHER_VERDICT: dict[str, frozenset[tuple[str, str | None]]] = {
    # it answers each timed round with the round before's answer: caught by its outputs (incorrect) when the two
    # rounds have as many calls, else by the call count (runtime_error, a broken protocol); the hidden-set calls
    # the judge inserts at secret slots (session 30) make round sizes differ (runtime_error on an H200, session 31)
    "attack_prepare_time_work": frozenset({("incorrect", None), ("runtime_error", None)}),
    # Attacker review 25: a rewrite after the answer is caught by the answer's commitment to the outputs' bytes
    # (runtime_error), or not made at all when the judge's stop lands first (incorrect: the kernel's own outputs);
    # on a GPU the outputs come through fetch and the kernel's own are wrong (incorrect)
    "attack_zombie_leader": frozenset({("incorrect", None), ("runtime_error", None)}),
    "attack_ptrace_thread_escape": frozenset({("incorrect", None), ("runtime_error", None)}),
    "attack_post_answer_orphans": frozenset({("incorrect", None), ("runtime_error", None)}),
    "attack_hopping_helper": frozenset({("incorrect", None), ("runtime_error", None)}),
}

#: The other example problems' candidates: problem -> candidate -> expected (status, reason).
EXPECTED_OTHER: dict[str, dict[str, tuple[str, str | None]]] = {
    "matmul": {"good": ("correct", None)},
    "tuple_out": {"good": ("correct", None)},  # a forward returning a tuple
    "int_ops": {"good": ("correct", None),  # integer tensors in and out
                "attack_off_by_one": ("incorrect", None),  # integers compared exactly (attacker review 16)
                # wrong outside get_inputs' integer range: the hidden sets perturb integers where the reference
                # accepts it (a known evasion until session 28)
                "attack_int_range": ("incorrect", None),
                # wrong only for far values coprime to 210, which session 28's first integer sets never made
                "attack_int_coprime": ("incorrect", None),
                # integers through float32: wrong beyond 2**24, which the sets reached only from session 28's end
                "attack_int_via_float": ("incorrect", None)},
    "kb_add": {"good": ("correct", None)},  # KernelBench's own Triton example, unchanged (MIT)
}

#: (problem, candidate) pairs that need a GPU: Triton's autotuner needs a driver; kb_add's inputs call ``.cuda()``.
GPU_ONLY: frozenset[tuple[str, str]] = frozenset({("relu2", "legit_autotune"), ("kb_add", "good")})


def expected(problem: str, candidate: str, device: str = "cpu") -> tuple[str, str | None]:
    """The verdict the environment must give ``candidate`` of example ``problem`` on ``device`` (cpu/cuda)."""
    if problem == "relu2":
        return EXPECTED_GPU.get(candidate, EXPECTED[candidate]) if device == "cuda" else EXPECTED[candidate]
    return EXPECTED_OTHER[problem][candidate]


def verdict_matches(problem: str, candidate: str, device: str, status: str, hack_reasons: list[str]) -> bool:
    """Whether a result's ``status``/``hack_reasons`` is a right verdict for the example on ``device``: the expected
    one, one of :data:`EITHER_VERDICT`'s, or on the GPU one of a racy candidate's (:data:`GPU_RACES`)."""
    allowed = {expected(problem, candidate, device)}
    if problem == "relu2":
        allowed |= EITHER_VERDICT.get(candidate, frozenset())
    if problem == "relu2" and device == "cuda":
        allowed |= GPU_RACES.get(candidate, frozenset())
    return any(status == want and (reason is None or reason in hack_reasons) for want, reason in allowed)


def all_examples() -> list[tuple[str, str]]:
    """Every (problem, candidate) pair with an expected verdict."""
    return [("relu2", name) for name in EXPECTED] + [(p, c) for p, cands in EXPECTED_OTHER.items() for c in cands]


def example_problem(name: str = "relu2") -> Problem:
    """The example problem ``name``: ``relu2`` (memory-bound, every candidate kind) or ``matmul`` (compute-bound)."""
    return Problem.from_file(EXAMPLES_ROOT / name / "problem.py")


def example_candidate(candidate: str, name: str = "relu2") -> str:
    """Source of an example candidate, e.g. ``example_candidate("decoy")``."""
    path = EXAMPLES_ROOT / name / "candidates" / f"{candidate}.py"
    if not path.is_file():
        raise ValueError(f"no example candidate {candidate!r}; choose from {sorted(EXPECTED)}")
    return path.read_text()
