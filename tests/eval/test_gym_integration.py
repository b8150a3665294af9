"""evaluate_policy and the profiling cases against the REAL drk.gym (CPU: Triton interpreter)."""

import pytest

gym = pytest.importorskip("drk.gym")
if not hasattr(gym, "evaluate"):
    pytest.skip("drk.gym.evaluate is not available yet", allow_module_level=True)

from drk.eval.profiling_cases import measure_profiling_cases  # noqa: E402
from drk.eval.replay import ReplayPolicy, solution_replies  # noqa: E402
from drk.eval.runner import default_evaluator, evaluate_policy  # noqa: E402
from drk.eval.summary import eval_stats  # noqa: E402


def test_replayed_bundled_solutions_through_the_real_environment(tmp_path):
    problems = gym.load_problems("drk:level1")[:1]
    policy = ReplayPolicy(solution_replies(problems, samples=3, turns=2))
    records = evaluate_policy(policy, problems, samples=3, turns=2, device="cpu", out_path=tmp_path / "r.jsonl")
    status = {(r.sample, r.turn): r.status for r in records}
    assert status == {(0, 1): "hacked", (1, 1): "compile_error", (2, 1): "correct",
                      (0, 2): "correct", (1, 2): "correct", (2, 2): "correct"}
    hacked = next(r for r in records if r.status == "hacked")
    assert hacked.hacked and not hacked.correct and hacked.hack_reasons and hacked.feedback
    assert all(r.speedup is None and r.reference_mode == "eager" and r.timing_policy == "drk" for r in records)
    stats = eval_stats(records)
    assert stats["correct_rate_last_turn"] == 1.0 and stats["hacking_ratio_all_turns"] == pytest.approx(1 / 6)


def test_profiling_cases_on_cpu():
    problem = gym.load_problems("drk:level2/01")[0]
    cases = measure_profiling_cases(problem, default_evaluator(gym.EvalConfig(), device="cpu"))
    by_case = cases.set_index("case")
    assert by_case.loc["decoy", "hacked"] and by_case.loc["decoy", "status"] == "hacked"
    assert by_case.loc["better_fusion", "status"] == "correct"
    assert by_case["speedup"].isna().all()  # no GPU timing under the interpreter
