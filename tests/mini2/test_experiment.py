"""The seeds x variants grid: one SFT per seed shared by its variants, held-out points and STTS in one tree,
resuming (finished jobs skipped, half-written redone, another config refused), the scheduler's order and failures,
worker processes, and the CLI."""

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict

import pytest

from drk.mini2.__main__ import main, seeds_spec
from drk.mini2.config import Mini2Config
from drk.mini2.experiment import Grid, Job, JobResult, _run_pooled, check_resumable, run_grid, timings
from drk.mini2.runs import DONE, load_stts, load_training, rl_dir, sft_dir, stts_dir
from drk.mini2.sft import DEFAULT_MIX, halve_shortcuts

TINY = dict(train_tasks="0-3", sft_per_task=4, sft_epochs=2, steps=2, group_size=2, eval_samples=2,
            eval_every=1)


def make_cfg(mini2_cfg, **extra):
    return Mini2Config.from_dict({**asdict(mini2_cfg), **TINY, **extra})


def test_grid_tree_resume_and_refusal(mini2_cfg, tmp_path):
    grid = Grid(make_cfg(mini2_cfg), str(tmp_path / "g"), variants=("trloo", "grpo"), seeds=(0, 1))
    results = run_grid(grid)
    assert [r.status for r in results] == ["done"] * len(results) and len(results) == 2 + 4 + 2
    for seed in (0, 1):
        assert (sft_dir(grid.root, "main", seed) / "checkpoint" / "config.json").is_file()
        for variant in ("trloo", "grpo"):
            run = rl_dir(grid.root, "main", variant, seed)
            points = [json.loads(x) for x in (run / "heldout.jsonl").read_text().splitlines()]
            assert [p["step"] for p in points] == [0, 1, 2] and (run / "final").is_dir()
            assert not (run / "episodes.jsonl").exists()  # not kept unless asked
            assert json.loads((run / DONE).read_text())["fingerprint"]
        # step 0 is the shared SFT checkpoint, evaluated with the same seed: identical across variants
        first = [json.loads((rl_dir(grid.root, "main", v, seed) / "heldout.jsonl").read_text().splitlines()[0])
                 for v in ("trloo", "grpo")]
        assert first[0]["counts"] == first[1]["counts"]
    stts = load_stts(grid.root)
    assert set(stts["context"]) == {"vanilla", "best_w"} and stts["turn"].max() == 8 and set(stts["seed"]) == {0, 1}
    # STTS turn 1 sees only the prompt in both contexts: the same samples (paired seeds)
    t1 = stts[(stts["turn"] == 1) & (stts["mode"] == "last")].pivot_table("value", ["seed", "p"], "context")
    assert (t1["vanilla"] == t1["best_w"]).all()
    log = load_training(grid.root)
    assert {"rl/reward_mean", "heldout/fast@1.2/turn3"} <= set(log["metric"]) and set(log["seed"]) == {0, 1}

    # resume: everything skipped; a half-written run (no done.json) is redone, alone
    assert {r.status for r in run_grid(grid)} == {"skipped"}
    half = rl_dir(grid.root, "main", "grpo", 1)
    (half / DONE).unlink()
    (half / "log.jsonl").write_text("garbage\n")
    redone = {r.job: r.status for r in run_grid(grid)}
    assert redone.pop("main/grpo/seed1") == "done" and set(redone.values()) == {"skipped"}
    assert len((half / "log.jsonl").read_text().splitlines()) == 2
    assert len(timings(grid.root)) == 8

    # the same tree with another config is refused before anything runs
    other = Grid(make_cfg(mini2_cfg, steps=3), grid.root, variants=("trloo", "grpo"), seeds=(0, 1))
    with pytest.raises(ValueError, match="another config"):
        check_resumable(other)
    with pytest.raises(ValueError, match="another config"):
        run_grid(other)


def test_grid_in_worker_processes_and_cli(mini2_cfg, tmp_path, capsys):
    root = tmp_path / "cli"
    common = ["--set", f"table={mini2_cfg.table}", "--set", "check_sources=false", "--set", "heldout_tasks=10-11",
              *[x for k, v in TINY.items() for x in ("--set", f"{k}={v}")]]
    assert main(["grid", "--out", str(root), "--variants", "trloo,single_turn", "--seeds", "3",
                 "--settings", "sensitivity", "--jobs", "2", *common]) == 0
    assert "{'done': 4}" in capsys.readouterr().out
    cfg = json.loads((rl_dir(root, "sensitivity", "single_turn", 3) / "config.json").read_text())
    assert cfg["mini2"]["group_size"] == 4 and cfg["mini2"]["temperature"] == 0.8 and cfg["mini2"]["seed"] == 3
    assert cfg["mini2"]["sft_mix"] == halve_shortcuts(DEFAULT_MIX) and cfg["rl"]["rollouts_per_prompt"] == 12
    assert (stts_dir(root, "sensitivity", 3) / DONE).is_file()
    assert main(["grid", "--out", str(root), "--variants", "ppo", *common]) == 2
    assert "unknown variants" in capsys.readouterr().err


def test_scheduler_order_blocking_and_limit():
    grid = Grid(Mini2Config(), "unused", variants=("trloo", "grpo"), seeds=(0, 1))
    jobs = grid.jobs()
    assert jobs[:2] == [Job("sft", "main", 0), Job("sft", "main", 1)] and jobs[-1] == Job("stts", "main", 1)
    seen, running, peak = [], set(), [0]

    def runner(job):
        running.add(job.name)
        peak[0] = max(peak[0], len(running))
        missing = [d.name for d in job.deps() if d.name not in seen]
        assert not missing, f"{job.name} started before {missing}"
        seen.append(job.name)
        running.discard(job.name)
        return JobResult(job.name, "failed" if job.name == "main/sft/seed1" else "done")

    with ThreadPoolExecutor(2) as pool:
        results = _run_pooled(jobs, 2, lambda job: pool.submit(runner, job), lambda r, n: None)
    status = {r.job: r.status for r in results}
    assert status["main/trloo/seed0"] == "done" and status["main/trloo/seed0/stts"] == "done"
    assert status["main/sft/seed1"] == "failed"
    assert status["main/trloo/seed1"] == status["main/grpo/seed1"] == status["main/trloo/seed1/stts"] == "blocked"
    assert peak[0] <= 2


def test_grid_validation_and_settings():
    assert seeds_spec("0-2,7") == [0, 1, 2, 7]
    with pytest.raises(ValueError, match="unknown variants"):
        Grid(Mini2Config(), "x", variants=("ppo",))
    with pytest.raises(ValueError, match="STTS"):
        Grid(Mini2Config(), "x", variants=("grpo",))
    with pytest.raises(ValueError, match="unknown settings"):
        Grid(Mini2Config(), "x", settings=("huge",))
    mix = halve_shortcuts(DEFAULT_MIX)
    assert mix["lazy"] + mix["hack"] == pytest.approx((DEFAULT_MIX["lazy"] + DEFAULT_MIX["hack"]) / 2)
    assert mix["honest"] / mix["wrong"] == pytest.approx(DEFAULT_MIX["honest"] / DEFAULT_MIX["wrong"])
    assert sum(mix.values()) == pytest.approx(1.0)
    sens = Grid(Mini2Config(), "x", settings=("main", "sensitivity")).config("sensitivity", 2)
    assert (sens.group_size, sens.temperature, sens.seed, sens.out_dir) == (4, 0.8, 2, "x/sensitivity")
    with pytest.raises(ValueError, match="eval_every"):
        Mini2Config(eval_every=-1)
    assert Mini2Config(heldout_tasks=12).heldout_tasks == "12"  # ``--set heldout_tasks=12`` parses as an int
