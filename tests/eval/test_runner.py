import json

import pytest

from drk.eval.policies import RequestMeta
from drk.eval.records import config_path, load_records
from drk.eval.replay import ReplayPolicy
from drk.eval.runner import evaluate_policy
from drk.gym import EvalConfig


class ScriptedPolicy:
    """Answers from a per-(sample, turn) script and remembers the conversations it was shown."""

    def __init__(self, script):
        self.script, self.seen = script, []

    def generate(self, messages_batch, *, n=1, temperature=1.0, top_p=0.95, max_new_tokens=8192, meta=None):
        self.seen.append((messages_batch, meta))
        return [[self.script[(s, m.turn)] for s in m.samples] for m in meta]

    def describe(self):
        return {"kind": "scripted"}


def test_multi_turn_records_feedback_and_files(tmp_path, problems, fake_evaluator):
    script = {(0, 1): "HACK", (0, 2): "GOOD x1.5", (1, 1): "nope", (1, 2): "GOOD"}
    policy = ScriptedPolicy(script)
    out = tmp_path / "run" / "records.jsonl"
    config = EvalConfig(reference_mode="compile", timing_policy="authors")
    records = evaluate_policy(policy, problems, samples=2, turns=2, eval_config=config, evaluator=fake_evaluator,
                              out_path=out)
    assert len(records) == 2 * 2 * 2 and [len(c) for c in fake_evaluator.calls] == [4, 4]
    first, second = policy.seen
    assert first[1] == [RequestMeta(p.key, 1, (0, 1)) for p in problems]
    conversation = second[0][0]
    assert conversation[-2] == {"role": "assistant", "content": "HACK"}
    assert "verdict on: HACK" in conversation[-1]["content"]
    assert "Optimise this PyTorch reference" in conversation[1]["content"]  # drk.chat's words
    by_key = {(r.problem, r.sample, r.turn): r for r in records}
    hacked = by_key[(problems[0].key, 0, 1)]
    assert hacked.status == "hacked" and hacked.hacked and hacked.reward == 0 and hacked.reply == "HACK"
    assert by_key[(problems[1].key, 0, 2)].reward == pytest.approx(2.5)
    assert by_key[(problems[1].key, 1, 2)].reward == pytest.approx(1.0)
    assert {r.level for r in records} == {1}
    loaded = load_records(out)
    assert [r.to_dict() for r in loaded] == [r.to_dict() for r in records]
    saved = json.loads(config_path(out).read_text())
    assert saved["eval_config"]["reference_mode"] == "compile" and saved["eval_config"]["timing_policy"] == "authors"
    assert saved["samples"] == 2 and saved["policy"] == {"kind": "scripted"} and "git_sha" in saved


def test_records_take_timing_policy_and_reference_mode_from_results(problems):
    from drk.gym import EvalResult

    def evaluator(pairs):
        return [EvalResult(status="correct", correct=True, reference_mode="compile", timing_policy="authors")
                for _ in pairs]

    records = evaluate_policy(ScriptedPolicy({(0, 1): "x"}), problems[:1], samples=1, turns=1, evaluator=evaluator)
    assert (records[0].reference_mode, records[0].timing_policy) == ("compile", "authors")


def test_best_w_context_shows_only_the_best_turns(problems, fake_evaluator):
    script = {(0, 1): "GOOD x2", (0, 2): "bad", (0, 3): "bad", (0, 4): "bad"}
    policy = ScriptedPolicy(script)
    evaluate_policy(policy, problems[:1], samples=1, turns=4, evaluator=fake_evaluator, context="best_w", window=2)
    last_conversation = policy.seen[-1][0][0]
    assert [m["content"] for m in last_conversation if m["role"] == "assistant"] == ["GOOD x2", "bad"]
    assert "verdict on: bad" in last_conversation[-1]["content"]


def test_replayed_records_rescore_identically(tmp_path, problems, fake_evaluator):
    script = {(s, t): ("GOOD x1.3" if (s + t) % 2 else "bad") for s in range(3) for t in (1, 2, 3)}
    out = tmp_path / "a.jsonl"
    first = evaluate_policy(ScriptedPolicy(script), problems, samples=3, turns=3, evaluator=fake_evaluator,
                            out_path=out)
    again = evaluate_policy(ReplayPolicy(out), problems, samples=3, turns=3, evaluator=fake_evaluator)
    assert [(r.problem, r.sample, r.turn, r.status, r.reply) for r in again] == [
        (r.problem, r.sample, r.turn, r.status, r.reply) for r in first]


@pytest.mark.parametrize("kwargs, match", [({"samples": 0}, "samples"), ({"context": "window"}, "vanilla"),
                                           ({"window": 0}, "window")])
def test_bad_settings_fail_before_any_work(problems, kwargs, match):
    with pytest.raises(ValueError, match=match):
        evaluate_policy(ScriptedPolicy({}), problems, evaluator=lambda pairs: 1 / 0, **kwargs)


def test_environment_scores_the_answer_not_the_reasoning(problems, fake_evaluator):
    reply = "<think>maybe ```python\nHACK\n```</think>final:\n```python\nGOOD x1.2\n```"
    records = evaluate_policy(ScriptedPolicy({(0, 1): reply}), problems[:1], samples=1, turns=1,
                              evaluator=fake_evaluator)
    sent = fake_evaluator.calls[0][0][1]
    assert "HACK" not in sent and "GOOD x1.2" in sent
    assert records[0].reply == reply and records[0].status == "correct"


def test_records_round_trip_through_parquet(tmp_path, problems, fake_evaluator):
    from drk.eval import load_records, save_parquet

    script = {(s, t): ("GOOD x1.3" if (s + t) % 2 else "bad") for s in range(2) for t in (1, 2)}
    records = evaluate_policy(ScriptedPolicy(script), problems, samples=2, turns=2, evaluator=fake_evaluator,
                              out_path=tmp_path / "r.jsonl")
    again = load_records(save_parquet(records, tmp_path / "r.parquet"))
    assert [r.to_dict() for r in again] == [r.to_dict() for r in records]


def test_run_config_is_validated_and_saved_with_the_records(tmp_path, problems, fake_evaluator):
    from drk.eval.runner import EvalRunConfig

    config = EvalRunConfig(samples=1, turns=2, context="best_w", window=1, top_p=0.5,
                           eval_config={"reference_mode": "compile"})
    out = tmp_path / "r.jsonl"
    records = evaluate_policy(ScriptedPolicy({(0, 1): "bad", (0, 2): "GOOD"}), problems[:1], config,
                              evaluator=fake_evaluator, out_path=out)
    assert [r.context for r in records] == ["best_w", "best_w"]
    saved = json.loads(config_path(out).read_text())
    assert (saved["context"], saved["window"], saved["top_p"]) == ("best_w", 1, 0.5)
    assert saved["eval_config"]["reference_mode"] == "compile" and saved["problems"] == [problems[0].key]
    assert {"git_sha", "drk_version", "torch"} <= set(saved)
    with pytest.raises(ValueError, match="not both"):
        evaluate_policy(ScriptedPolicy({}), problems, config, samples=2, evaluator=fake_evaluator)
    with pytest.raises(ValueError, match="top_p"):
        EvalRunConfig(top_p=0.0)


def test_records_carry_every_result_field_but_the_left_out_ones(problems):
    """EvalRecord is derived from EvalResult: a result field reaches the records without an edit in drk.eval."""
    from dataclasses import fields

    from drk.eval.records import EPISODE_FIELDS, LEFT_OUT_RESULT_FIELDS, EvalRecord
    from drk.gym import EvalResult

    record_fields = {f.name for f in fields(EvalRecord)}
    result_fields = {f.name for f in fields(EvalResult)}
    assert record_fields == (result_fields - LEFT_OUT_RESULT_FIELDS) | {name for name, _, _ in EPISODE_FIELDS}
    result = EvalResult(status="runtime_error", problem="name", env_error=True, profile=[{"name": "k"}])
    record = EvalRecord.from_result(result, problem=problems[0].key, level=1, sample=0, turn=1)
    assert record.env_error and record.problem == problems[0].key and "profile" not in record.to_dict()
