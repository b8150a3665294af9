"""drk.mini: the cold-start data, the ablation configs, and one tiny end-to-end pass on CPU."""

import ast
import json
import random
from collections import Counter
from dataclasses import replace

import pytest

from drk.gym import evaluate, load_problems
from drk.mini import MiniConfig, first_attempts, load_split, rl_config, wrong_source
from drk.mini.data import draw_kinds

RELU = "L1/01_ReLU"


@pytest.fixture(scope="module")
def relu():
    return next(p for p in load_problems("drk:level1") if p.key == RELU)


def test_wrong_source_plants_one_bug_and_stays_valid_python(relu):
    fused = first_attempts(relu)["fused"]
    wrong = wrong_source(fused, bug=0)
    ast.parse(wrong)
    changed = [(a, b) for a, b in zip(fused.splitlines(), wrong.splitlines()) if a != b]
    assert len(changed) == 1 and "* 0.5" in changed[0][1] and "return" in changed[0][1]
    with pytest.raises(ValueError, match="return"):
        wrong_source("class ModelNew:\n    def forward(self, x):\n        pass\n")


def test_every_kind_gets_the_verdict_it_stands_for(relu):
    attempts = first_attempts(relu)
    results = {kind: evaluate(relu, src, device="cpu") for kind, src in attempts.items()}
    verdicts = {kind: result.status for kind, result in results.items()}
    assert verdicts == {"fused": "correct", "wrong": "incorrect", "decoy": "hacked"}, \
        {kind: (result.stage, result.error) for kind, result in results.items()}  # ReLU has no lazy solution


def test_draw_kinds_follows_the_mix_and_reassigns_missing_kinds():
    mix = {"fused": 0.5, "lazy": 0.25, "wrong": 0.25}
    counts = Counter(draw_kinds(["fused", "lazy", "wrong", "decoy"], 8, mix, random.Random(0)))
    assert counts == {"fused": 4, "lazy": 2, "wrong": 2}
    counts = Counter(draw_kinds(["fused", "wrong", "decoy"], 8, mix, random.Random(0)))  # no lazy: it goes to wrong
    assert counts == {"fused": 4, "wrong": 4}
    with pytest.raises(ValueError, match="unknown kinds"):
        draw_kinds(["fused"], 4, {"clever": 1.0}, random.Random(0))


def test_split_is_disjoint_and_every_training_problem_has_its_kinds():
    train, heldout = load_split(MiniConfig())
    assert not {p.key for p in train} & {p.key for p in heldout}
    lazy = [p.key for p in train if "lazy" in first_attempts(p)]
    assert len(lazy) >= 4  # PR and PRS need lazy first attempts to act on
    with pytest.raises(ValueError, match="overlap"):
        load_split(replace(MiniConfig(), heldout_problems=(RELU,)))


def test_variants_map_to_the_ablation_settings():
    cfg = MiniConfig(device="cpu")
    assert rl_config(cfg, "grpo", 0).estimator == "grpo"
    assert rl_config(replace(cfg, temperature=0.5), "trloo", 0).temperature == 0.5
    assert rl_config(cfg, "single_turn", 0).max_turns == 1
    assert rl_config(cfg, "gamma0", 0).gamma == 0.0
    no_check = rl_config(cfg, "no_hack_check", 0)
    assert no_check.eval_config["hacking_check"] is False and no_check.eval_config["profile"] is False
    prs = rl_config(cfg, "prs_hard", 1)
    assert prs.prs == "hard" and prs.eval_config["profile"] is True and prs.seed == 1
    assert prs.out_dir.endswith("prs_hard/seed1")
    with pytest.raises(ValueError, match="unknown variant"):
        rl_config(cfg, "magic", 0)
    with pytest.raises(ValueError, match="unknown MiniConfig keys"):
        MiniConfig.from_dict({"learning_rate": 1.0})


def test_tiny_end_to_end_on_cpu(tmp_path):
    """data -> policy -> SFT -> one RL step -> committed log + held-out records, at toy sizes."""
    from drk.mini import make_data, make_policy, run_sft, run_variant

    cfg = MiniConfig(out_dir=str(tmp_path / "runs"), results_dir=str(tmp_path / "results"), device="cpu",
                     train_problems=(RELU, "L1/21_Softmax"), heldout_problems=("L1/06_Tanh",),
                     trajectories_per_problem=2, vocab_size=400, hidden_size=32, num_layers=1, num_heads=2,
                     sft_epochs=1, sft_batch_size=4, rl_steps=1, prompts_per_step=2, rollouts_per_prompt=2,
                     max_reply_tokens=32, heldout_samples=1)
    data = make_data(cfg)
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    assert len(rows) == 4 and {r["problem"] for r in rows} == {RELU, "L1/21_Softmax"}
    assert all([m["role"] for m in r["messages"]] == ["system", "user", "assistant", "user", "assistant"]
               for r in rows)
    make_policy(cfg)
    assert (run_sft(cfg) / "config.json").is_file()
    log = run_variant(cfg, "trloo", seed=0)
    steps = [json.loads(line) for line in log.read_text().splitlines()]
    assert any("gym/correct_rate/turn1" in s for s in steps)
    records = (tmp_path / "results" / "heldout" / "trloo_seed0.jsonl").read_text().splitlines()
    assert len(records) == 2 and all(json.loads(r)["problem"] == "L1/06_Tanh" for r in records)


def test_an_existing_checkpoint_with_lora_takes_the_same_path(tmp_path):
    """The full-size path: ``model`` is a checkpoint (here the tiny test model), RL trains a LoRA adapter."""
    from drk.mini import make_data, make_policy, run_sft, run_variant
    from drk.models import build_tiny_model

    model = build_tiny_model(tmp_path / "pretrained")
    cfg = MiniConfig(out_dir=str(tmp_path / "runs"), results_dir=str(tmp_path / "results"), device="cpu",
                     model=str(model), lora=True, train_problems=(RELU,), heldout_problems=("L1/06_Tanh",),
                     trajectories_per_problem=2, sft_epochs=1, sft_batch_size=2, rl_steps=1, prompts_per_step=1,
                     rollouts_per_prompt=2, max_reply_tokens=16, heldout_samples=1)
    assert make_policy(cfg) == model  # nothing is built
    make_data(cfg)
    run_sft(cfg)
    assert rl_config(cfg, "trloo", 0).lora
    run_variant(cfg, "trloo", seed=0)
    assert (tmp_path / "runs" / "rl" / "trloo" / "seed0" / "checkpoint-final" / "adapter_config.json").is_file()
    assert len((tmp_path / "results" / "heldout" / "trloo_seed0.jsonl").read_text().splitlines()) == 2


def test_a_failing_run_is_counted_and_loses_no_other_work(tmp_path):
    from drk.mini import run_all, run_variants
    from drk.mini.experiment import save_config

    cfg = MiniConfig(out_dir=str(tmp_path / "runs"), results_dir=str(tmp_path / "results"), device="cpu")
    with pytest.raises(ValueError, match="unknown variants"):
        run_all(cfg, variants=["trloo", "magic"])  # checked before any stage runs
    assert not (tmp_path / "results").exists()
    # a run that fails inside its own process (here: no SFT checkpoint) is reported, and its log kept
    failed = run_variants(cfg, ["trloo"], [0], 1, save_config(cfg, tmp_path / "config.json"))
    assert failed == 1
    assert "checkpoint-final" in (tmp_path / "runs" / "rl" / "trloo" / "seed0.log").read_text()


def test_config_is_validated_and_the_committed_one_loads():
    from drk.reproduce import MINI_RESULTS
    from drk.train.config import load_config_file

    committed = MiniConfig.from_dict(load_config_file(f"{MINI_RESULTS}/config.json"))  # written before the new fields
    assert committed.max_context_tokens == 4096 and committed.timeout_s == 120 and committed.heldout_top_p == 0.95
    assert committed.micro_batch_size == 8 and committed.dtype == "float32"
    assert replace(committed, prompts_per_step=3).micro_batch_size == 4  # gcd(8, 3 x 4)
    for bad, match in [({"device": "tpu"}, "device"), ({"rl_steps": 0}, "rl_steps"), ({"heldout_top_p": 2.0}, "top_p"),
                       ({"mix": {"clever": 1.0}}, "unknown kinds"), ({"max_reply_tokens": 8192}, "max_context"),
                       ({"heldout_problems": (RELU,)}, "overlap")]:
        with pytest.raises(ValueError, match=match):
            MiniConfig(**bad)
