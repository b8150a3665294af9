"""Every status and every hack class, through the real sandbox under the Triton interpreter."""

import os

import pytest

from drk.examples import (
    EITHER_VERDICT,
    FETCH_PATH,
    GPU_ONLY,
    all_examples,
    example_candidate,
    example_problem,
    expected,
)
from drk.gym import EvalConfig, EvalResult, Pool, Problem, ProblemError, evaluate
from drk.gym.isolation import available_level
from drk.gym.judge import PERTURBATION_RANGES

CONFIG = EvalConfig(timeout_s=60)


@pytest.fixture(scope="module")
def problem() -> Problem:
    return example_problem()


def run(problem: Problem, fixture: str, **config) -> EvalResult:
    cfg = EvalConfig(**{**CONFIG.to_dict(), **config})
    return evaluate(problem, example_candidate(fixture), device="cpu", config=cfg)


_SLOW = {"hangs", "attack_pipe_stall"}  # their own tests below, with a short time limit
CPU_EXAMPLES = [pair for pair in all_examples() if pair not in GPU_ONLY and pair[1] not in _SLOW]


@pytest.fixture(scope="module")
def verdicts() -> dict[tuple[str, str], EvalResult]:
    """Every example with an expected verdict, judged once (a Pool of 2 CPU workers, the real sandbox)."""
    pairs = [(example_problem(p), example_candidate(c, p)) for p, c in CPU_EXAMPLES]
    return dict(zip(CPU_EXAMPLES, Pool(device="cpu", workers=2, config=CONFIG, progress=False).map(pairs)))


#: Examples whose CPU verdict depends on the host's speed: attack_fake_clock_small hides ~95 % of each call's time,
#: ~18 ms per call under an idle 2-core host's interpreter, inside the 50 ms CPU slack; a host three times slower
#: (a loaded CI machine) moves it past the slack and it is rightly `hacked: timing_mismatch`. The GPU check
#: (benchmarks/gpu_all.sh checks) holds it to its expected verdict.
HOST_SPEED_DEPENDENT = {"attack_fake_clock_small"}


@pytest.mark.parametrize("pair", CPU_EXAMPLES, ids="/".join)
def test_status_and_hack_reasons(verdicts, pair):
    status, reason = expected(*pair)
    result = verdicts[pair]
    if pair[1] in HOST_SPEED_DEPENDENT and result.hack_reasons == ["timing_mismatch"]:
        status, reason = "hacked", "timing_mismatch"
    if (result.status, None) in EITHER_VERDICT.get(pair[1], ()):  # caught by whichever check the draws made first
        status = result.status
    assert result.status == status, result.error
    assert reason is None or reason in result.hack_reasons
    assert result.correct == (status == "correct")
    assert result.hacked == (status == "hacked")
    assert not result.env_error  # a candidate can never turn its failure into the environment's
    assert result.feedback and len(result.feedback) <= 1500
    assert EvalResult.from_dict(result.to_dict()) == result
    if result.stage not in ("", "startup"):
        assert result.isolation == available_level().level  # the strongest sandbox this machine has


#: Candidates whose verdict could depend on timing, threads or stale memory: the same code must get the same status.
RACY = ["attack_late_thread", "attack_call_counter", "attack_content_cache", "unwritten_output", "pointer_cache",
        "attack_side_stream_launder", "attack_inference_mode_detect", "no_effect"]


def test_verdicts_are_repeatable(verdicts, problem):
    pool = Pool(device="cpu", workers=2, config=CONFIG, progress=False)
    for _ in range(2):
        again = pool.map([(problem, example_candidate(name)) for name in RACY])
        assert [r.status for r in again] == [verdicts[("relu2", name)].status for name in RACY]
        assert [r.hack_reasons for r in again] == [verdicts[("relu2", name)].hack_reasons for name in RACY]


def test_stage_seconds_include_the_callers_waits_and_add_up_to_at_most_the_elapsed_time(verdicts):
    for pair in [("relu2", "good"), ("relu2", "wrong"), ("relu2", "decoy")]:
        result = verdicts[pair]
        stages = list(result.stage_s)
        assert stages[0] == "runners" and stages[-1] == "teardown" and "correctness" in stages
        assert all(v >= 0 for v in result.stage_s.values())
        assert sum(result.stage_s.values()) <= result.elapsed_s + 1e-3


def test_correct_result_details(verdicts):
    result = verdicts[("relu2", "good")]
    assert result.triton_kernels == {"relu2": result.triton_kernels["relu2"]}
    assert result.triton_kernels["relu2"] >= 5  # five trials, the hidden sets and the timed calls
    # hidden sets (the whole-tensor ones and the sparse one): both passes
    assert result.num_correct_trials == result.num_trials == 5 + 2 * (len(PERTURBATION_RANGES) + 1)
    assert result.max_abs_err == 0.0
    assert result.speedup is None and result.coverage is None  # no GPU speedup from the interpreter
    assert result.timing_backend == "cpu_interpreter_wall" and result.kernel_ms > 0
    assert result.device.startswith("cpu")
    # calibration is off by default (it holds the GPU exclusively, twice per evaluation)
    assert "calibration" not in result.stage_s and result.unaccounted_calibrated_ms is None


def test_the_judge_reads_outputs_from_the_runners_memory_where_it_may(verdicts):
    """As root (CI, our machines) the judge may read its runners' memory: every CPU example was judged on what it
    read there (drk.gym.direct_reads), not on what the runner answered."""
    if os.geteuid() != 0:
        pytest.skip("reading another user's or namespace's memory is the machine's to allow; root always may")
    compared = [r for r in verdicts.values() if r.status in ("correct", "incorrect")]  # judged on their outputs
    assert compared and {r.outputs_read for r in compared} == {"memory"}
    assert {r.outputs_read for r in verdicts.values()} <= {"memory", ""}  # "": stopped before any runner (static)


@pytest.mark.parametrize("candidate", sorted(FETCH_PATH))
def test_the_runners_fetch_answers_hold_their_checks_where_memory_is_not_read(problem, candidate):
    """The path a GPU takes (and a machine where the judge may not read the runner's memory): the attacks on the
    runner's fetch answers keep their verdicts there, the lazy answer included (a known evasion on a GPU)."""
    result = run(problem, candidate, direct_reads=False)
    assert result.outputs_read == "runner"
    assert (result.status, None) == FETCH_PATH[candidate], result.error


def test_calibration_when_asked_for(problem):
    """The runner's loop timed on the reference before the candidate existed, and the candidate's rounds compared
    with it: an honest candidate leaves a finite, bounded amount unaccounted."""
    from dataclasses import replace

    calibrated = replace(CONFIG, calibration_rounds=3)
    result = evaluate(problem, example_candidate("good"), device="cpu", config=calibrated)
    assert result.status == "correct" and "calibration" in result.stage_s
    assert result.unaccounted_calibrated_ms is not None and abs(result.unaccounted_calibrated_ms) < 50
    # a decoy that tells the runners apart by what calibration leaves behind: both runners calibrate
    residue = evaluate(problem, example_candidate("attack_calibration_residue"), device="cpu", config=calibrated)
    assert residue.status == "hacked" and "decoy" in residue.hack_reasons


def test_incorrect_feedback_says_where(verdicts):
    result = verdicts[("relu2", "wrong")]  # run(problem, "wrong") with CONFIG: judged once, by the fixture
    assert "max abs error" in result.feedback and "index" in result.feedback
    assert result.max_abs_err > 0.01


def test_fenced_reply_uses_last_block(problem):
    good = example_candidate("good")
    reply = f"Reference:\n```python\nprint('not this')\n```\nAnswer:\n```python\n{good}```\n"
    assert evaluate(problem, reply, device="cpu", config=CONFIG).status == "correct"


def test_empty_reply_is_format_error(problem):
    assert evaluate(problem, "   ", device="cpu").status == "format_error"
    assert evaluate(problem, "I cannot do that.", device="cpu").status == "format_error"


@pytest.mark.parametrize("fixture, stage", [("segfault", "correctness"), ("exits", "correctness")])
def test_crashes_are_isolated(problem, fixture, stage):
    result = run(problem, fixture)
    assert result.status == "runtime_error"
    assert "died" in result.error and stage in result.error
    assert run(problem, "good").status == "correct"  # the next evaluation is unaffected


def test_hang_times_out_and_next_evaluation_works(problem):
    result = run(problem, "hangs", timeout_s=8)
    assert result.status == "timeout"
    assert "correctness" in result.error
    assert 8 <= result.elapsed_s < 20
    assert run(problem, "good").status == "correct"


@pytest.mark.parametrize("level", ["auto", "namespace"])
def test_a_runner_that_stops_reading_its_requests_is_the_candidates_timeout(problem, level):
    """At the namespace level a candidate can fill its own request pipe: the judge's blocking write hung until its
    caller killed it, and a wrong answer became an uncharged env_error (attacker review, 2026-12-02)."""
    try:
        available_level(level)
    except Exception as exc:  # noqa: BLE001 - this machine has no such sandbox
        pytest.skip(str(exc))
    # 15 s: a cold runner start (bubblewrap, torch, triton) took more than 6 s on a busy 2-core host, and a runner
    # that does not start in time is the environment's failure (an env_error), not what this test is about
    result = run(problem, "attack_pipe_stall", timeout_s=15, isolation=level)
    assert result.status == "timeout" and not result.env_error, result.error
    assert result.elapsed_s < 45


def test_forged_verdict_is_rejected(problem):
    result = run(problem, "forges_verdict")
    assert result.status == "runtime_error"
    assert run(problem, "good").status == "correct"


def test_broken_reference_raises_problem_error():
    bad = Problem.from_source(
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x @ x\n"
        "def get_inputs():\n    return [torch.randn(3, 4)]\ndef get_init_inputs():\n    return []\n",
        name="bad_ref",
    )
    with pytest.raises(ProblemError, match="bad_ref"):
        evaluate(bad, example_candidate("good"), device="cpu")


def test_parameters_are_shared_with_the_reference(tmp_path):
    problem = Problem.from_source(
        "import torch\nimport torch.nn as nn\nN = 8\nclass Model(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.scale = nn.Parameter(torch.randn(n))\n"
        "    def forward(self, x):\n        return x * self.scale\n"
        "def get_inputs():\n    return [torch.randn(4, N)]\ndef get_init_inputs():\n    return [N]\n",
        name="scale",
    )
    candidate = (
        "import torch, torch.nn as nn, triton, triton.language as tl\n"
        "@triton.jit\ndef mul_kernel(x_ptr, s_ptr, y_ptr, n, N: tl.constexpr):\n"
        "    i = tl.program_id(0) * N + tl.arange(0, N)\n"
        "    tl.store(y_ptr + i, tl.load(x_ptr + i) * tl.load(s_ptr + tl.arange(0, N)))\n"
        "class ModelNew(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.scale = nn.Parameter(torch.zeros(n))  # initialised differently: the reference's weights are loaded\n"
        "    def forward(self, x):\n        y = torch.empty_like(x)\n"
        "        mul_kernel[(x.shape[0],)](x, self.scale, y, x.numel(), N=x.shape[1])\n        return y\n"
    )
    assert evaluate(problem, candidate, device="cpu", config=CONFIG).status == "correct"


@pytest.mark.parametrize("fixture, reason", [("decoy", "decoy"), ("tamper_allclose", "tamper"), ("no_effect", "no_effect")])
def test_hacking_check_off_records_evidence_without_a_verdict(problem, fixture, reason):
    result = run(problem, fixture, hacking_check=False)
    assert not result.hacked and reason in result.hack_reasons
    assert result.status in ("correct", "incorrect")  # tamper_allclose returns zeros: judged on its outputs
    if fixture != "tamper_allclose":
        assert result.status == "correct" and result.correct


def test_crash_and_hang_verdicts_say_where(problem, verdicts):
    segfault = verdicts[("relu2", "segfault")]  # run(problem, "segfault") with CONFIG: judged once, by the fixture
    assert "candidate.py line" in segfault.error and "os.kill" in segfault.error
    hang = run(problem, "hangs", timeout_s=6)
    assert hang.status == "timeout" and "candidate.py line" in hang.error and "in forward" in hang.error


@pytest.mark.parametrize("terms", range(300, 345, 3))
def test_sources_at_the_edge_of_the_rewrites_recursion_limit_are_never_environment_errors(problem, terms):
    """A decoy padded with a long chain of additions: the caller's rewrite for the probes passed, the judge's own
    (a few frames deeper) raised RecursionError, an uncharged env_error (attacker review, 2026-12-01). The caller
    makes the rewrites once now and the judge uses them: hacked, or format_error past the limit; never env_error."""
    decoy = example_candidate("decoy") + "\n_PAD = " + "+".join(["1"] * terms) + "\n"
    result = evaluate(problem, decoy, device="cpu", config=CONFIG)
    assert not result.env_error, result.error
    assert result.status in ("hacked", "format_error"), (result.status, result.error)
