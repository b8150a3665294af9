"""Shared fixtures of the mini2 policy/RL tests: the partial H200 verdict table (problems 0-12) and one SFT'd tiny
policy, built once per session (seconds on one CPU thread)."""

from pathlib import Path

import pytest
import torch

TABLE = Path(__file__).resolve().parents[2] / "results" / "mini2" / "verdicts_part1.csv"
TRAIN, HELDOUT = "0-9", "10-12"  # the partial table's problems, split for the tests


@pytest.fixture(scope="session")
def table():
    from drk.mini2 import load_verdicts

    torch.set_num_threads(1)  # this size is fastest on one thread, and the CI box is shared
    return load_verdicts(TABLE, check_sources=False)  # the source check is test_verdicts' business (3 s)


@pytest.fixture(scope="session")
def mini2_cfg(tmp_path_factory):
    from drk.mini2.config import Mini2Config

    return Mini2Config(table=str(TABLE), check_sources=False, train_tasks=TRAIN, heldout_tasks=HELDOUT,
                       out_dir=str(tmp_path_factory.mktemp("mini2")), sft_per_task=16, sft_epochs=15, group_size=4,
                       steps=2, eval_samples=4, eval_turns=4)


@pytest.fixture(scope="session")
def sft_policy(mini2_cfg, table):
    from drk.mini2.sft import run_sft

    policy, _ = run_sft(mini2_cfg, verdicts=table)
    return policy
