"""The live check's comparison (issue 12, item 4) on CPU: live sources that re-measure (noise), that judge a status
differently, and LiveVerdicts judging a batch's new pairs once, side by side."""

from dataclasses import replace

from drk.mini2.live_check import RecordingVerdicts, compare_answers, live_check
from drk.mini2.verdicts import LiveVerdicts, Verdict


class NoisyTable:
    """The table's verdicts with every speedup scaled (a re-measurement), and optionally one status flipped."""

    def __init__(self, table, factor=1.02, flip=None):
        self.table, self.factor, self.flip = table, factor, flip

    def verdict(self, problem, program):
        v = self.table.verdict(problem, program)
        if self.flip is not None and (v.problem, v.program) == self.flip:
            return replace(v, status="incorrect", speedup=None)
        return replace(v, speedup=v.speedup * self.factor) if v.speedup is not None else v

    def __iter__(self):
        return iter(self.table)


def test_a_re_measured_table_reproduces_the_runs_statuses_and_rewards_within_its_noise(mini2_cfg, sft_policy, table,
                                                                                      tmp_path):
    report = live_check(mini2_cfg, "trloo", sft_policy, NoisyTable(table, factor=1.02), steps=2, out_dir=tmp_path,
                        table=table)
    assert report.reproduced and report.calls > 0
    assert report.status_agree == report.same_program and report.same_program >= report.calls // 2
    # reward = C + C*min(speedup, 3): a 2 % speedup difference moves it by at most 0.06
    assert 0 < report.reward_abs_diff_max <= 0.06 + 1e-9
    assert len(report.table_reward_means) == len(report.live_reward_means) == 2
    assert (tmp_path / "live_check.json").is_file() and (tmp_path / "live" / "log.jsonl").is_file()


def test_a_status_the_live_judge_disagrees_on_fails_the_check(mini2_cfg, sft_policy, table, tmp_path):
    recorder = RecordingVerdicts(table)
    live_check(mini2_cfg, "trloo", sft_policy, recorder, steps=1, out_dir=tmp_path / "first", table=table)
    correct = next(v for v in recorder.answers if v.correct)  # a pair the run does ask for
    report = live_check(mini2_cfg, "trloo", sft_policy, NoisyTable(table, flip=(correct.problem, correct.program)),
                        steps=1, out_dir=tmp_path / "second", table=table)
    assert not report.reproduced
    assert report.disagreements[0]["table"] == "correct" and report.disagreements[0]["live"] == "incorrect"


def test_compare_answers_skips_calls_on_different_programs():
    a = Verdict("p", "FUSE BS W4", "correct", speedup=2.0)
    b = Verdict("p", "FUSE BL W4", "correct", speedup=1.0)
    counts = compare_answers([a, a], [a, b])
    assert counts["calls"] == 2 and counts["same_program"] == 1 and counts["status_agree"] == 1
    assert counts["reward_abs_diff_max"] == 0.0


class CountingPool:
    """A stand-in for drk.gym.Pool: answers every job correct at 1.5x and counts its map calls."""

    def __init__(self):
        self.maps, self.jobs = 0, 0

    def map(self, jobs, config=None):
        from drk.gym import EvalResult

        self.maps += 1
        self.jobs += len(jobs)
        return [EvalResult(status="correct", correct=True, speedup=1.5, kernel_ms=0.1, ref_ms=0.15) for _ in jobs]


def test_live_verdicts_judge_each_new_pair_once_per_batch():
    pool = CountingPool()
    live = LiveVerdicts(pool)
    task = "m2_00_GELU_SubMean_Tanh_Bias"
    answers = live.verdict_batch([task] * 4, ["FUSE BS W4", "FUSE BS W4", "LAZY", "NOT A PROGRAM"])
    assert [a.status for a in answers] == ["correct", "correct", "correct", "format_error"]
    assert pool.maps == 1 and pool.jobs == 2 and live.judged == 2
    live.verdict(task, "LAZY")  # already judged: no evaluation
    assert pool.maps == 1


def test_the_cli_runs_sft_then_both_runs_and_exits_by_the_verdict(monkeypatch, table, tmp_path, capsys):
    """``python -m drk.mini2 live-check``, with the live judge replaced by a re-measured table (CPU, seconds)."""
    import json

    import drk.mini2.verdicts as verdicts
    from drk.mini2.__main__ import main

    from .conftest import HELDOUT, TABLE, TRAIN

    monkeypatch.setattr(verdicts, "LiveVerdicts", lambda pool, config: NoisyTable(table, factor=0.99))
    sets = [f"table={TABLE}", "check_sources=false", f"train_tasks={TRAIN}", f"heldout_tasks={HELDOUT}",
            "sft_per_task=8", "sft_epochs=5", "group_size=4"]
    argv = ["live-check", "--device", "cpu", "--steps", "1", "--out", str(tmp_path)]
    rc = main(argv + [x for s in sets for x in ("--set", s)])
    out = capsys.readouterr().out
    assert rc == 0 and "reproduced" in out
    report = json.loads((tmp_path / "live_check.json").read_text())
    assert report["reproduced"] and report["steps"] == 1 and (tmp_path / "sft" / "checkpoint").exists()
