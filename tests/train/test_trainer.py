"""End to end on CPU: the tiny model runs 2 RL steps against the real environment (Triton interpreter).

A random tiny model never writes a working kernel, so one rollout per group replays the bundled correct ReLU
solution at turn 1 (a scripted rollout): that sample earns reward 1 and makes the gradient nonzero.
"""

import json

import numpy as np
import pytest
import torch

from drk.jsonl import read_jsonl
from drk.rl import after_success_keep_mask, compute_advantages, flat_group_keep_mask
from drk.train.api import build_trainer
from tests.train.conftest import tiny_config


def spy_on(trainer):
    """Record every batch our override returns and every micro-batch that reaches the loss."""
    batches, loss_inputs = [], []
    make_batch, compute_loss = trainer._generate_and_score_completions, trainer._compute_loss

    def batch_spy(inputs):
        out = make_batch(inputs)
        batches.append({k: v.detach().clone() for k, v in out.items() if torch.is_tensor(v)})
        batches[-1]["trajectories"] = trainer.drk_last_batch.trajectories
        return out

    def loss_spy(model, inputs):
        loss_inputs.append({k: v.detach().clone() for k, v in inputs.items() if torch.is_tensor(v)})
        return compute_loss(model, inputs)

    trainer._generate_and_score_completions, trainer._compute_loss = batch_spy, loss_spy
    return batches, loss_inputs


def sample_ids(records):
    """(rewards, prompt_id, traj_id, turn) of the logged samples, as drk.rl takes them."""
    return ([r["reward"] for r in records], [r["prompt_id"] for r in records], [r["sample"] for r in records],
            [r["turn"] for r in records])


def expected_advantages(records, estimator, keep=None):
    """drk.rl's advantages recomputed from the logged samples (rewards, ids, PRS/MRS keep flags, and ``keep``)."""
    kept = np.array([r["keep_prs"] and r["keep_mrs"] for r in records])
    return compute_advantages(*sample_ids(records), estimator=estimator, keep=kept if keep is None else kept & keep)


@pytest.mark.parametrize("estimator, lora", [("trloo", True), ("grpo", False)], ids=["trloo-lora", "grpo-full"])
def test_two_steps_end_to_end(tmp_path, tiny_model_dir, scripted_file, estimator, lora):
    cfg = tiny_config(tmp_path, tiny_model_dir, scripted_file, estimator=estimator, lora=lora)
    trainer = build_trainer(cfg)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    batches, loss_inputs = spy_on(trainer)
    trainer.train()

    # parameters moved (LoRA: only the adapter is trainable)
    after = dict(trainer.model.named_parameters())
    assert before and all("lora_" in n for n in before) == lora
    assert any(not torch.equal(before[n], after[n].detach()) for n in before)

    records = read_jsonl(tmp_path / "run" / "episodes.jsonl")
    assert {r["step"] for r in records} == {1, 2} and len(records) == 2 * 2 * 2  # 2 steps x 2 rollouts x 2 turns
    scripted = [r for r in records if r["scripted"]]
    assert [r["status"] for r in scripted] == ["correct", "correct"] and all(r["reward"] == 1.0 for r in scripted)
    sampled = [r for r in records if not r["scripted"]]
    assert all(r["reward"] == 0.0 and r["status"] in ("format_error", "compile_error") for r in sampled)

    for step, batch in enumerate(batches, start=1):
        recs = [r for r in records if r["step"] == step]
        expected = expected_advantages(recs, estimator)
        assert np.allclose([r["advantage"] for r in recs], expected)
        assert np.abs(expected).max() > 0  # the scripted success gives a real learning signal
        trajs = batch["trajectories"]
        for r, a in zip(recs, expected, strict=True):
            turn = trajs[r["sample"]].turns[r["turn"] - 1]
            applied = batch["advantages"][r["sample"], turn.start:turn.end]
            assert torch.allclose(applied, torch.tensor(float(a)))
        for i, tr in enumerate(trajs):
            env = torch.tensor(tr.env_mask, dtype=torch.float32)
            assert (env == 0).any()  # every trajectory here has a feedback turn...
            assert torch.all(batch["tool_mask"][i, : len(env)][env == 0] == 0)  # ...and it gets no loss
    _check_loss_saw_the_batches(batches, loss_inputs)

    log = read_jsonl(tmp_path / "run" / "log.jsonl")
    steps = [row for row in log if "loss" in row]
    assert len(steps) == 2
    for key in ("grad_norm", "entropy", "rl/reward_mean", "gym/correct_rate/turn1", "gym/fast@1/turn1",
                "gym/hacking_ratio", "rl/mrs_masked_frac", "rl/prs_masked_frac", "rollout/kl_k1",
                "rollout/ppl_train", "rewards/episode_return/mean"):
        assert key in steps[-1], key
    assert steps[-1]["gym/correct_rate/turn1"] == 0.5
    assert abs(steps[-1]["rollout/kl_k1"]) < 1e-3  # HF sampler log-probs agree with the trainer's


def test_authors_filters_end_to_end(tmp_path, tiny_model_dir, scripted_file, relu_problem):
    """Both of the authors' filters on, 1 step of 2 problems x 2 rollouts x 3 turns. ReLU's scripted rollout
    replays correct, no-code, correct (R = 1, 0, 1): its turn 2 is a failure after a success. The sampled
    rollouts score 0 everywhere, so the second problem (no script) is a flat group."""
    solution = json.loads(scripted_file.read_text().splitlines()[0])["reply"]
    script = tmp_path / "replies.jsonl"
    script.write_text("".join(json.dumps({"problem": relu_problem.name, "turn": t, "reply": reply}) + "\n"
                              for t, reply in [(1, solution), (2, "No code this time."), (3, solution)]))
    cfg = tiny_config(tmp_path, tiny_model_dir, script, problems="drk:level1", num_problems=2, prompts_per_step=2,
                      max_turns=3, steps=1, drop_flat_groups=True, mask_failures_after_success=True)
    trainer = build_trainer(cfg)
    batches, _ = spy_on(trainer)
    trainer.train()

    records = read_jsonl(tmp_path / "run" / "episodes.jsonl")
    assert len(records) == 2 * 2 * 3
    flat, after = flat_group_keep_mask(*sample_ids(records)), after_success_keep_mask(*sample_ids(records))
    np.testing.assert_array_equal(flat, [r["problem"] == relu_problem.name for r in records])
    assert [(r["problem"], r["scripted"], r["turn"]) for r, a in zip(records, after) if not a] == [
        (relu_problem.name, True, 2)]
    keep_filters = trainer.drk_last_batch.keep_filters
    np.testing.assert_array_equal(keep_filters["flat_group"], flat)
    np.testing.assert_array_equal(keep_filters["after_success"], after)

    expected = expected_advantages(records, "trloo", keep=flat & after)
    assert np.allclose([r["advantage"] for r in records], expected)
    assert np.abs(expected).max() > 0  # the kept ReLU samples still carry a learning signal
    batch, trajs = batches[0], batches[0]["trajectories"]
    for r, a, dropped in zip(records, expected, ~(flat & after), strict=True):
        turn = trajs[r["sample"]].turns[r["turn"] - 1]
        assert torch.allclose(batch["advantages"][r["sample"], turn.start:turn.end], torch.tensor(float(a)))
        assert torch.all(batch["tool_mask"][r["sample"], turn.start:turn.end] == float(not dropped))

    step = [row for row in read_jsonl(tmp_path / "run" / "log.jsonl") if "loss" in row][-1]
    assert step["rl/flat_group_masked_frac"] == 0.5
    assert step["rl/after_success_masked_frac"] == pytest.approx(1 / 12)
    assert step["rl/kept_frac"] == pytest.approx(5 / 12)


def _check_loss_saw_the_batches(batches, loss_inputs):
    """Each micro-batch row given to the loss is a row of a generated batch, advantages and mask intact."""
    rows = [(b, i) for b in batches for i in range(b["completion_ids"].size(0))]
    assert loss_inputs
    for inp in loss_inputs:
        for j in range(inp["completion_ids"].size(0)):
            match = [(b, i) for b, i in rows if torch.equal(b["completion_ids"][i], inp["completion_ids"][j])]
            assert match, "a loss row does not come from a generated batch"
            b, i = match[0]
            assert torch.equal(b["advantages"][i], inp["advantages"][j])
            assert torch.equal(b["tool_mask"][i], inp["tool_mask"][j])


def test_environment_failures_get_no_gradient(tmp_path, tiny_model_dir, scripted_file):
    """Samples the environment could not judge (env_error, e.g. a GPU OOM in the reference) leave the loss."""
    from drk.gym import EvalResult
    from drk.train.api import make_env

    real = make_env("cpu", workers=1, eval_config={"timeout_s": 60})
    calls = []

    def flaky_env(problems, replies):
        results = real(problems, replies)
        calls.append(len(results))
        if len(calls) == 1:  # the first turn of the first step: the environment "ran out of memory" on sample 0
            results[0] = EvalResult(status="runtime_error", env_error=True, error="[drk] CUDA out of memory")
        return results

    trainer = build_trainer(tiny_config(tmp_path, tiny_model_dir, scripted_file, steps=1), env=flaky_env)
    trainer.train()
    table, keep = trainer.drk_last_batch.table, trainer.drk_last_batch.keep
    assert table["env_error"].sum() == 1 and not keep[table["env_error"]].any()
    step = [row for row in read_jsonl(tmp_path / "run" / "log.jsonl") if "loss" in row][-1]
    assert step["gym/env_error_rate"] == pytest.approx(1 / len(table["env_error"]))
