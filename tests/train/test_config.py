"""RLConfig: the paper's defaults, validation, files, and the derived TRL GRPOConfig."""

from pathlib import Path

import pytest

from drk.train.config import RLConfig, parse_overrides
from drk.train.sft import SFTRunConfig

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_paper_defaults():
    c = RLConfig()
    assert (c.max_turns, c.prompts_per_step, c.rollouts_per_prompt, c.steps) == (3, 16, 16, 300)
    assert (c.learning_rate, c.clip_low, c.clip_high, c.kl_beta, c.temperature) == (1e-6, 0.2, 0.28, 0.0, 1.0)
    assert (c.estimator, c.gamma, c.max_reply_tokens, c.speedup_cap) == ("trloo", 1.0, 8192, 3.0)
    assert (c.prs_tau, c.prs_s, c.mrs_low, c.mrs_high, c.mrs_token_veto) == (0.3, 0.1, 0.999, 1.001, 1e-4)


def test_authors_filters_are_off_by_default():
    # the paper's equations as written; the authors' code also drops flat groups and masks failures after success
    c = RLConfig()
    assert (c.drop_flat_groups, c.mask_failures_after_success, c.flat_group_min_std) == (False, False, 1e-3)


def test_grpo_config_is_one_update_per_batch():
    c = RLConfig(prompts_per_step=2, rollouts_per_prompt=4, micro_batch_size=2, device="cpu", steps=5)
    g = c.to_grpo_config()
    assert g.generation_batch_size == 8 and g.gradient_accumulation_steps == 4 and g.steps_per_generation == 4
    assert g.num_generations == 4 and g.num_iterations == 1 and g.max_steps == 5
    assert (g.learning_rate, g.epsilon, g.epsilon_high, g.beta) == (1e-6, 0.2, 0.28, 0.0)
    assert g.lr_scheduler_type == "constant" and g.loss_type == "dapo" and g.use_cpu and not g.bf16


@pytest.mark.parametrize("bad, match", [
    ({"estimator": "ppo"}, "estimator"),
    ({"gamma": 1.5}, "gamma"),
    ({"rollouts_per_prompt": 1}, "rollouts_per_prompt"),
    ({"prompts_per_step": 3, "rollouts_per_prompt": 2, "micro_batch_size": 4}, "divisible"),
    ({"mrs_low": 1.01}, "MRS window"),
    ({"rollout": "vllm", "vllm_mode": "server"}, "vllm_server_base_url"),
    ({"vllm_kwargs": {"enforce_eager": True}}, "colocate"),
    ({"scripted_rollouts_per_prompt": 1}, "scripted_replies"),
    ({"max_reply_tokens": 100, "max_context_tokens": 50}, "max_context_tokens"),
    ({"flat_group_min_std": 0.0}, "flat_group_min_std"),
    ({"flat_group_min_std": float("nan")}, "flat_group_min_std"),
    ({"drop_flat_groups": "yes"}, "drop_flat_groups"),
    ({"mask_failures_after_success": 1}, "mask_failures_after_success"),
])
def test_bad_values_are_rejected_with_the_field_named(bad, match):
    with pytest.raises(ValueError, match=match):
        RLConfig(**bad)


def test_unknown_keys_are_an_error(tmp_path):
    with pytest.raises(ValueError, match=r"unknown RLConfig keys \['stpes'\].*valid keys"):
        RLConfig.from_dict({"stpes": 3})
    f = tmp_path / "c.yaml"
    f.write_text("steps: 3\nlearnign_rate: 1.0e-6\n")
    with pytest.raises(ValueError, match="learnign_rate"):
        RLConfig.from_file(f)


def test_file_and_overrides(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("steps: 3\nestimator: grpo\n")
    c = RLConfig.from_file(f, parse_overrides(["steps=7", "lora=true", "report_to=[]"]))
    assert (c.steps, c.estimator, c.lora, c.report_to) == (7, "grpo", True, [])
    assert RLConfig.from_dict(c.to_dict()) == c


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_example_configs_load(path):
    cls = SFTRunConfig if path.name.startswith("sft") else RLConfig
    cls.from_file(path)


def test_scripted_solutions_are_written_for_their_owner_only(tmp_path):
    """The file holds bundled solutions verbatim: candidates run as other uids, and must not read the answer key."""
    import stat

    from drk.gym import load_problems
    from drk.train.api import write_scripted_solutions

    path = write_scripted_solutions(load_problems("drk:level1")[:2], tmp_path / "run" / "scripted.jsonl")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text().count("\n") == 2
