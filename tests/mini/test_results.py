"""The committed mini-experiment results (results/mini, made on an H200): their schema, and the figures from them."""

import json
from pathlib import Path

import pandas as pd
import pytest

from drk.figures import build
from drk.mini import DEFAULT_VARIANTS, MiniConfig
from drk.mini.summary import SUMMARY_METRICS, load_mini_logs, summarize
from drk.reproduce import MINI_RESULTS

RESULTS = Path(MINI_RESULTS)
#: Every RL step row of every run must carry these (drk.train.logs.METRICS and TRL's).
STEP_METRICS = ("step", "rl/reward_mean", "gym/correct_rate/turn1", "gym/fast@1/turn1", "gym/fast@1.2/turn1",
                "gym/hacking_ratio", "entropy", "grad_norm", "rollout/ppl_train", "rollout/ppl_rollout",
                "rl/mrs_masked_frac", "rl/prs_masked_frac", "time/rollout_s")


def test_every_default_variant_has_a_device_log_with_the_step_metrics():
    logs = load_mini_logs(RESULTS)
    assert set(logs.variant) == set(DEFAULT_VARIANTS)
    for variant, run in logs.groupby("variant"):
        assert len(run) >= 3, variant
        missing = [m for m in STEP_METRICS if m not in run or run[m].isna().all()]
        assert not missing, (variant, missing)
        assert run["step"].is_monotonic_increasing and run["gym/hacking_ratio"].between(0, 1).all()
        if variant != "single_turn":
            assert run["gym/fast@1/turn2"].notna().all()  # multi-turn runs log the second turn
        if variant in ("pr", "prs_soft", "prs_hard"):
            assert run["gym/profiling_ratio"].notna().any()  # GPU profiles: the runs came from the device


def test_logs_came_from_a_gpu_and_the_config_is_the_committed_one():
    config = json.loads((RESULTS / "config.json").read_text())
    assert MiniConfig.from_dict(config).device == "cuda"
    records = pd.read_json(RESULTS / "heldout" / "trloo_seed0.jsonl", lines=True)
    judged = records[~records["error"].fillna("").str.startswith("[drk]")]  # not the environment's own failures
    assert len(judged) >= 0.9 * len(records) and judged["device"].str.startswith("cuda").all() and set(records["problem"]) == set(config["heldout_problems"])
    data = [json.loads(line) for line in (RESULTS / "sft_data.jsonl").read_text().splitlines()]
    assert {row["problem"] for row in data} == set(config["train_problems"])


def test_summary_has_one_row_per_run():
    table = summarize(RESULTS)
    assert len(table) == len(DEFAULT_VARIANTS) and (table["steps"] >= 3).all()
    for metric in SUMMARY_METRICS:
        assert table[f"{metric}@first"].notna().all()
    assert table["heldout_correct"].between(0, 1).all()


@pytest.mark.parametrize("make", [build.make_training_figures, build.make_fig2_left, build.make_mini_summary])
def test_figures_are_drawn_from_the_committed_logs(tmp_path, make):
    paths = make(tmp_path, RESULTS)
    assert paths and all(p.is_file() and p.stat().st_size > 0 for p in paths)
    captions = [p.read_text() for p in paths if p.suffix in (".txt", ".md")]
    assert captions and all("mini" in c or str(RESULTS) in c for c in captions)
