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


# --- a synthetic grid tree (no training): what drk.mini2.runs reads, with values chosen by the test -------------

METRICS = ("fast@1.2/turn1", "fast@1.2/turn2", "fast@1.2/turn3", "fast@1/turn3", "hacked/turn1", "pr_correct/turn3")
PROBLEMS = ("pa", "pb")


def synthetic_point(step, value, problems=PROBLEMS, n=8):
    """A held-out point whose every metric has the pooled value ``value(metric)``: n samples per problem."""
    counts = {m: [[value(m) * n] * len(problems), [float(n)] * len(problems)] for m in METRICS}
    return {"step": step, "turns": 3, "problems": list(problems), "counts": counts,
            "metrics": {m: value(m) for m in METRICS}}


def write_synthetic_run(path, variant, value, steps=10, every=5):
    """A finished run folder: config.json, log.jsonl (reward = value("train_reward") + step / 1000), heldout.jsonl
    at steps 0, every, ..., steps with ``value(metric, step)``, done.json."""
    import json

    from drk.jsonl import append_jsonl
    from drk.mini2.endpoints import eval_steps
    from drk.mini2.runs import DONE

    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"variant": variant, "mini2": {"max_turns": 3},
                                                  "rl": {"steps": steps}}))
    append_jsonl(path / "log.jsonl", [{"step": s, "rl/reward_mean": value("train_reward", s) + s / 1000,
                                       "grad_norm": 1.0, "mini2/hack_evidence_rate": 0.1, "rl/mrs_masked_frac": 0.0,
                                       "note": "text"} for s in range(1, steps + 1)])
    append_jsonl(path / "heldout.jsonl", [synthetic_point(s, lambda m, s=s: value(m, s))
                                          for s in eval_steps(steps, every)])
    (path / DONE).write_text("{}")


def write_synthetic_stts(path, value, turns=8):
    """A finished STTS folder for both contexts, ``value(context, metric)`` per metric."""
    from drk.jsonl import append_jsonl
    from drk.mini2.runs import DONE

    path.mkdir(parents=True)
    for context in ("vanilla", "best_w"):
        names = [f"fast@1.2/{tag}turn{t}" for t in range(1, turns + 1) for tag in ("", "best_")]
        counts = {m: [[value(context, m) * 8] * 2, [8.0, 8.0]] for m in names}
        append_jsonl(path / "stts.jsonl", [{"context": context, "window": 4, "turns": turns,
                                            "problems": list(PROBLEMS), "counts": counts,
                                            "metrics": {m: value(context, m) for m in names}}])
    (path / DONE).write_text("{}")


@pytest.fixture
def synthetic_tree(tmp_path):
    """``make(variants, seeds, settings=("main",), value=...)`` writes a tree under tmp_path and returns its root.
    ``value(setting, variant, seed, metric, step)`` defaults to a variant-specific constant plus 0.01 * seed."""

    def make(variants, seeds, settings=("main",), value=None, stts=True):
        from drk.mini2.runs import rl_dir, stts_dir

        value = value or (lambda st, v, s, m, step: 0.1 * (1 + sorted(variants).index(v) % 5) + 0.01 * s)
        root = tmp_path / "tree"
        for st in settings:
            for v in variants:
                for s in seeds:
                    write_synthetic_run(rl_dir(root, st, v, s), v,
                                        lambda m, step=10, st=st, v=v, s=s: value(st, v, s, m, step))
                    if v == "trloo" and stts:
                        write_synthetic_stts(stts_dir(root, st, s),
                                             lambda c, m, s=s: (0.3 if c == "best_w" else 0.2) + 0.01 * s)
        return root

    return make


@pytest.fixture
def synthetic():
    """The writers above, for tests that build their own folders (conftest is not importable as a module)."""
    from types import SimpleNamespace

    return SimpleNamespace(run=write_synthetic_run, stts=write_synthetic_stts, point=synthetic_point)
