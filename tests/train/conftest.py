"""Fixtures for the trainer tests: a tiny model built once, the ReLU problem, a scripted correct reply."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    from drk.models import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def relu_problem():
    from drk.gym import load_problems

    return next(p for p in load_problems("drk:level1") if p.name == "01_ReLU")


@pytest.fixture(scope="session")
def scripted_file(tmp_path_factory, relu_problem) -> Path:
    """A turn-1 reply holding the bundled correct ReLU solution: the reward-bearing sample of the e2e tests."""
    from drk.train.api import write_scripted_solutions

    return write_scripted_solutions([relu_problem], tmp_path_factory.mktemp("scripted") / "replies.jsonl")


def tiny_config(tmp_path, model_dir, scripted=None, **overrides):
    """An RLConfig small enough for CPU CI: 1 problem x 2 rollouts x 2 turns, 8 tokens per reply, 2 steps."""
    from drk.train.config import RLConfig

    fields = dict(
        model=str(model_dir), problems="drk:level1/01", prompts_per_step=1, rollouts_per_prompt=2,
        micro_batch_size=2, max_turns=2, max_reply_tokens=8, max_context_tokens=2048, steps=2,
        learning_rate=1e-4, device="cpu", out_dir=str(tmp_path / "run"), env_workers=1,
        eval_config={"timeout_s": 60},
    )
    if scripted is not None:
        fields.update(scripted_replies=str(scripted), scripted_rollouts_per_prompt=1)
    fields.update(overrides)
    return RLConfig(**fields)
