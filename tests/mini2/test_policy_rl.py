"""The mini2 policy and the lean RL loop: SFT beats random, the loop applies exactly the trainer's advantages and
masks (drk.train.step.score_batch, also via MultiTurnGRPOTrainer's own code path), TRL's loss, every variant runs."""

import copy
import dataclasses
import json
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from drk.mini2.config import VARIANTS, Mini2Config, rl_config
from drk.mini2.env import Mini2Env, Mini2Format, episode_settings, play, resolve_tasks
from drk.mini2.policy import Policy, new_policy
from drk.mini2.rl import Trainer, grpo_loss, run_rl
from drk.rl import compute_advantages
from drk.train.step import score_batch


def first_attempts(policy, table, tasks, group=8, seed=0):
    policy.seed(seed)
    fmt = Mini2Format(policy.tokenizer)
    trajs = play(tasks, group, generate=policy.generate, env=Mini2Env(table), fmt=fmt,
                 settings=episode_settings(1, True))
    return Counter(tr.turns[0].result["status"] for tr in trajs), len(trajs)


def test_sft_policy_beats_random_on_first_attempts(table, sft_policy):
    tasks = resolve_tasks("0-12", table)  # training tasks and the three held out from SFT
    sft, n = first_attempts(sft_policy, table, tasks)
    rand, _ = first_attempts(new_policy(seed=1), table, tasks)
    assert sft["correct"] / n > 0.35 > rand["correct"] / n
    assert (sft["format_error"] + sft["compile_error"]) / n < 0.15  # it writes programs
    assert sft["hacked"] + sft["incorrect"] > 0  # mixed quality: RL has something to unlearn


def fixed_batch(cfg, table, policy, variant):
    """One batch sampled from a bf16 copy (a real rollout/trainer mismatch), and a Trainer for ``variant``."""
    cfg = cfg.with_variant(variant)
    tasks = resolve_tasks(cfg.train_tasks, table)
    config = rl_config(cfg, variant, prompts_per_step=len(tasks))
    learner = Policy(copy.deepcopy(policy.model), policy.tokenizer)
    trainer = Trainer(cfg, config, learner, table, tasks)
    sampler = learner.sampling_copy(torch.bfloat16)
    sampler.seed(5)
    trajs = play(tasks, config.rollouts_per_prompt, generate=sampler.generate, env=trainer.env, fmt=trainer.fmt,
                 settings=trainer.settings)
    return trainer, trajs


MASKED = {"rl_overrides": {"use_profiling_ratio": True, "prs": "soft", "drop_flat_groups": True}}


def test_lean_loop_hands_score_batch_tensors_to_the_loss_unchanged(mini2_cfg, table, sft_policy):
    cfg = Mini2Config.from_dict({**dataclasses.asdict(mini2_cfg), **MASKED})
    trainer, trajs = fixed_batch(cfg, table, sft_policy, "mrs_bf16")
    out = trainer.step(trajectories=trajs)
    assert out.loss_advantages is out.signals.token_advantages and out.loss_mask is out.signals.loss_mask
    again = score_batch(trajs, out.train_logps, trainer.config, step=1)  # the same pure function, recomputed
    for name in ("advantages", "keep", "keep_prs", "keep_mrs"):
        np.testing.assert_array_equal(getattr(again, name), getattr(out.signals, name))
    assert torch.equal(again.token_advantages, out.loss_advantages) and torch.equal(again.loss_mask, out.loss_mask)
    table_ = again.table
    want = compute_advantages(table_["reward"], table_["prompt_id"], table_["traj_id"], table_["turn"],
                              estimator="trloo", keep=again.keep)
    np.testing.assert_allclose(out.signals.advantages, want)
    # the batch exercises the masks: PRS (soft), MRS (bf16 rollouts) and some kept samples
    assert (~out.signals.keep_mrs).any() and out.signals.keep.any()
    assert 0 < out.metrics["rl/kept_frac"] < 1


def test_trainers_own_code_path_gives_the_same_advantages_and_masks(mini2_cfg, table, sft_policy, monkeypatch,
                                                                    tmp_path):
    from trl import GRPOTrainer

    from drk.train.trainer import MultiTurnGRPOTrainer

    cfg = Mini2Config.from_dict({**dataclasses.asdict(mini2_cfg), **MASKED, "out_dir": str(tmp_path)})
    trainer, trajs = fixed_batch(cfg, table, sft_policy, "mrs_bf16")
    out = trainer.step(trajectories=trajs)
    # MultiTurnGRPOTrainer's _generate_and_score_completions without a model: TRL's part (rollout + padding,
    # which would call our rollout_func) is replaced by the padded batch it returns, with the trainer's log-probs
    # of the same weights as ``old_per_token_logps`` (what _train_logps reuses).
    width = out.train_logps.size(1)
    completion_mask = torch.zeros(len(trajs), width)
    for i, tr in enumerate(trajs):
        completion_mask[i, :len(tr.completion_ids)] = 1  # TRL: ones over each rollout_func completion
    trl_batch = {"completion_mask": completion_mask, "old_per_token_logps": out.train_logps}
    monkeypatch.setattr(GRPOTrainer, "_generate_and_score_completions", lambda self, inputs: dict(trl_batch))
    real = object.__new__(MultiTurnGRPOTrainer)
    real.__dict__.update(drk_config=trainer.config, state=SimpleNamespace(global_step=0), _drk_rollout_stats={},
                         _metrics={"train": defaultdict(list)})
    batch = real._generate_and_score_completions([{"trajectory": tr} for tr in trajs])
    assert torch.equal(batch["advantages"], out.loss_advantages)
    assert torch.equal(batch["tool_mask"], out.loss_mask)
    assert float(batch["num_items_in_batch"]) == float(out.loss_mask.sum())  # the loss normaliser too
    np.testing.assert_array_equal(real.drk_last_batch.keep, out.signals.keep)
    np.testing.assert_array_equal(real.drk_last_batch.advantages, out.signals.advantages)


def test_grpo_loss_is_trls_dapo_loss_and_reinforce_at_ratio_one():
    torch.manual_seed(0)
    logits = torch.randn(3, 5, requires_grad=True)
    logps = torch.log_softmax(logits, -1)
    adv = torch.randn(3, 5)
    mask = (torch.rand(3, 5) > 0.3).float()
    loss, stats = grpo_loss(logps, logps.detach(), adv, mask, clip_low=0.2, clip_high=0.28)
    (g,) = torch.autograd.grad(loss, logits, retain_graph=True)
    reinforce = -(adv * mask * logps).sum() / mask.sum()
    (g_ref,) = torch.autograd.grad(reinforce, logits)
    torch.testing.assert_close(g, g_ref)
    assert stats == {"clip_ratio/low": 0.0, "clip_ratio/high": 0.0}
    # off-policy tokens are clipped as TRL clips them: a ratio above 1 + eps_high with A > 0 has no gradient
    logps = torch.log_softmax(logits, -1)
    old = logps.detach() - 1.0  # ratio e > 1.28
    loss2, stats2 = grpo_loss(logps, old, adv.abs(), mask, clip_low=0.2, clip_high=0.28)
    (g2,) = torch.autograd.grad(loss2, logits)
    assert torch.all(g2 == 0) and stats2["clip_ratio/high"] == pytest.approx(1.0)


def test_single_turn_variant_keeps_the_number_of_samples(mini2_cfg):
    base = rl_config(mini2_cfg, "trloo", prompts_per_step=10)
    single = rl_config(mini2_cfg.with_variant("single_turn"), "single_turn", prompts_per_step=10)
    assert single.max_turns == 1 and single.rollouts_per_prompt == base.rollouts_per_prompt * base.max_turns
    assert rl_config(mini2_cfg, "no_hack_check").eval_config == {"hacking_check": False}
    with pytest.raises(ValueError, match="unknown variant"):
        rl_config(mini2_cfg, "ppo")
    with pytest.raises(ValueError, match="group_size"):
        Mini2Config(group_size=1)


def test_every_variant_runs_two_steps_and_logs(mini2_cfg, table, sft_policy, tmp_path):
    cfg = Mini2Config.from_dict({**dataclasses.asdict(mini2_cfg), "train_tasks": "0-4"})
    logs = {}
    for variant in VARIANTS:
        _, out = run_rl(cfg, variant, sft_policy, verdicts=table, out_dir=tmp_path / variant)
        lines = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
        assert [m["step"] for m in lines] == [1, 2], variant
        for key in ("rl/reward_mean", "rl/adv_mean", "rl/kept_frac", "rl/prs_masked_frac", "rl/mrs_masked_frac",
                    "mini2/fast@1.2/turn1", "mini2/hack_evidence_rate", "gym/profiling_ratio", "mini2/kl_ref",
                    "loss", "grad_norm", "time/step_s"):
            assert key in lines[-1], (variant, key)
        assert (out / "episodes.jsonl").is_file() and (out / "final" / "config.json").is_file()
        logs[variant] = lines
    assert all(m["rollout/turns_mean"] == 1 for m in logs["single_turn"])
    assert logs["single_turn"][0]["rl/samples"] == 5 * cfg.group_size * cfg.max_turns
    assert logs["mrs"][0]["rl/mrs_masked_frac"] == 0  # fp32 both sides: nothing to reject
    assert logs["mrs_bf16"][0]["rl/mrs_ratio_min"] != 1.0  # bf16 rollouts: a real mismatch
    assert logs["mrs_stale"][1]["rollout/kl_k3"] > logs["mrs_stale"][0]["rollout/kl_k3"]  # one update stale
    assert logs["trloo"][0]["mini2/kl_ref"] == 0.0 and logs["trloo"][1]["mini2/kl_ref"] > 0
    # grpo_rescaled: TRLOO's advantages except lone samples (0); seen in the episodes log of one step
    eps = [json.loads(x) for x in (tmp_path / "grpo_rescaled" / "episodes.jsonl").read_text().splitlines()]
    groups = Counter((e["step"], e["prompt_id"], e["turn"]) for e in eps)
    lone = [e for e in eps if groups[(e["step"], e["prompt_id"], e["turn"])] == 1]
    assert all(e["advantage"] == 0.0 for e in lone)


def test_eval_every_writes_heldout_points_without_changing_training(mini2_cfg, table, sft_policy, tmp_path):
    base = {**dataclasses.asdict(mini2_cfg), "train_tasks": "0-4", "steps": 3}
    logs, outs = {}, {}
    for every in (0, 2):
        cfg = Mini2Config.from_dict({**base, "eval_every": every})
        _, outs[every] = run_rl(cfg, "trloo", sft_policy, verdicts=table, out_dir=tmp_path / f"e{every}")
        logs[every] = [{k: v for k, v in json.loads(x).items() if not k.startswith("time/")}
                       for x in (outs[every] / "log.jsonl").read_text().splitlines()]
    assert logs[0] == logs[2]  # evaluating draws from its own sampler stream: training is unchanged
    assert not (outs[0] / "heldout.jsonl").exists()
    points = [json.loads(x) for x in (outs[2] / "heldout.jsonl").read_text().splitlines()]
    assert [p["step"] for p in points] == [0, 2, 3]  # the SFT policy, every 2 steps, the last step
    assert points[0]["problems"] == sorted(t.name for t in resolve_tasks(mini2_cfg.heldout_tasks, table))
    n = mini2_cfg.eval_samples
    assert all(den == n for p in points for den in p["counts"]["fast@1.2/turn3"][1])  # every sample, turn 3
    assert all(0 <= p["metrics"]["fast@1.2/turn3"] <= 1 for p in points)


def test_a_heldout_table_changes_the_heldout_points_and_not_training(mini2_cfg, table, sft_policy, tmp_path):
    """``heldout_table`` (Table 2's mini2 row: the held-out rows measured against torch.compile): the held-out
    evaluation reads it, training does not. Here every held-out row of the other table is 100x fast, so its
    Fast@1.2 is the correct rate, never below the training table's."""
    import pandas as pd

    fast = pd.read_csv(mini2_cfg.table)
    fast["speedup"] = fast["speedup"].where(fast["speedup"].isna(), 100.0)
    other = tmp_path / "fast.csv"
    fast.to_csv(other, index=False)
    sidecar = Path(mini2_cfg.table).with_suffix(".json")
    if sidecar.is_file():
        other.with_suffix(".json").write_text(sidecar.read_text())
    base = {**dataclasses.asdict(mini2_cfg), "train_tasks": "0-4", "steps": 2, "eval_every": 2}
    logs, points = {}, {}
    for name, held in (("same", ""), ("other", str(other))):
        cfg = Mini2Config.from_dict({**base, "heldout_table": held})
        _, out = run_rl(cfg, "trloo", sft_policy, verdicts=table, out_dir=tmp_path / name)
        logs[name] = [{k: v for k, v in json.loads(x).items() if not k.startswith("time/")}
                      for x in (out / "log.jsonl").read_text().splitlines()]
        points[name] = [json.loads(x)["metrics"] for x in (out / "heldout.jsonl").read_text().splitlines()]
    assert logs["same"] == logs["other"]
    for same, other_point in zip(points["same"], points["other"]):
        assert other_point["fast@1.2/turn3"] == pytest.approx(other_point["correct/turn3"])
        # turn 1 sees no feedback yet: the same answers, the same statuses, judged faster
        assert other_point["correct/turn1"] == pytest.approx(same["correct/turn1"])
        assert other_point["fast@1.2/turn1"] >= same["fast@1.2/turn1"]
    assert any(o["fast@1.2/turn1"] > s["fast@1.2/turn1"] for s, o in zip(points["same"], points["other"]))
