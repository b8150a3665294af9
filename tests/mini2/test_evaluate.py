"""Held-out evaluation (Fast@p per turn, STTS beyond the training turns, vanilla vs best-w context) and the CLI."""

import json

import pytest

from drk.metrics import fast_p
from drk.mini2.__main__ import main
from drk.mini2.env import resolve_tasks
from drk.mini2.evaluate import EvalSettings, evaluate, fast_by_turn, summary


@pytest.mark.parametrize("context", ["vanilla", "best_w"])
def test_eval_gives_fast_p_per_turn_beyond_training_turns(table, sft_policy, mini2_cfg, context):
    tasks = resolve_tasks(mini2_cfg.heldout_tasks, table)
    turns = mini2_cfg.max_turns + 2  # sequential test-time scaling: more turns than training used
    settings = EvalSettings(samples=4, turns=turns, context=context, window=1)
    recs = evaluate(sft_policy, tasks, table, settings)
    assert len(recs) == len(tasks) * 4 * turns  # episodes continue after success by default
    frame = summary(recs)
    for t in range(1, turns + 1):
        assert f"eval/fast@1.2/turn{t}" in set(frame["metric"]) and f"eval/fast@1.2/best_turn{t}" in set(frame["metric"])
    best = fast_by_turn(frame, 1.2, "best")
    assert len(best) == turns and all(a <= b for a, b in zip(best, best[1:]))  # by turn t: never decreases
    assert best[0] == pytest.approx(fast_p(recs, 1.2, turn=1))
    assert not any(r["correct"] for r in recs if r["hacked"])  # judged with the check on: a hack never counts
    prompt = min(r["context_tokens"] for r in recs)
    last = [r["context_tokens"] for r in recs if r["turn"] == turns]
    if context == "best_w":  # one past turn (<= 5 reply + 4 feedback tokens), however many turns ran
        assert max(last) <= prompt + 3 + 9
    else:
        assert max(last) > prompt + 9 * 2


def test_cli_sft_rl_eval(tmp_path, capsys):
    common = ["--set", "table=results/mini2/verdicts_part1.csv", "--set", "check_sources=false",
              "--set", "train_tasks=0-3", "--set", "heldout_tasks=11-12", "--set", f"out_dir={tmp_path}",
              "--set", "sft_epochs=2", "--set", "sft_per_task=4", "--set", "steps=2", "--set", "group_size=2",
              "--set", "eval_samples=2", "--set", "eval_turns=4"]
    assert main(["sft", *common]) == 0
    assert (tmp_path / "sft" / "seed0" / "checkpoint" / "config.json").is_file()
    assert main(["rl", "--variant", "grpo", *common]) == 0
    run = tmp_path / "rl" / "grpo" / "seed0"
    assert len((run / "log.jsonl").read_text().splitlines()) == 2
    assert json.loads((run / "config.json").read_text())["rl"]["estimator"] == "grpo"
    assert main(["eval", "--checkpoint", str(run / "final"), "--context", "best_w", *common]) == 0
    assert (run / "eval_best_w_T4_summary.csv").is_file() and "eval/fast@1.2/best_turn4" in capsys.readouterr().out
    assert main(["rl", *common, "--set", "train_tasks=train"]) == 2  # 13-29 are not in the partial table
    assert "no (complete) verdicts" in capsys.readouterr().err
