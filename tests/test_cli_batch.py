"""``drk eval PROBLEMS CANDIDATES --out``: batch evaluation end to end (CPU interpreter), resume from the cache,
error rows, the summary; and the batch helpers on their own (no evaluation)."""

import json
import math

import pandas as pd
import pytest

from drk.cli import main
from drk.eval.batch import (
    CandidateRow,
    batch_summary,
    evaluate_batch,
    load_candidates,
    problem_resolver,
    write_records,
)
from drk.examples import example_candidate, example_problem
from drk.gym import Problem

GOOD, DECOY = example_candidate("good"), example_candidate("decoy")
MATMUL_GOOD = example_candidate("good", name="matmul")


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def problems_file(tmp_path):
    """The two example problems as a Parquet dataset in KernelBench's column layout."""
    rows = [{"code": example_problem(name).source, "name": name, "level": 1} for name in ("relu2", "matmul")]
    path = tmp_path / "problems.parquet"
    pd.DataFrame(rows).to_parquet(path, index=False)
    return path


def run_batch(problems, candidates, out, cache, *extra):
    return main(["eval", str(problems), str(candidates), "--out", str(out), "--cache-dir", str(cache),
                 "--device", "cpu", "--timeout-s", "60", "--workers", "2", *extra])


def test_batch_end_to_end_with_resume(tmp_path, problems_file, capsys):
    cache = tmp_path / "cache"
    # an "interrupted" first run: only the first reply got judged (and cached)
    first = write_jsonl(tmp_path / "first.jsonl", [{"problem": "relu2", "reply": GOOD}])
    assert run_batch(problems_file, first, tmp_path / "first.parquet", cache) == 0
    capsys.readouterr()

    rows = [{"problem": "relu2", "reply": GOOD}, {"problem": "relu2", "reply": f"Here:\n```python\n{DECOY}\n```"},
            {"problem": "L1/matmul", "reply": MATMUL_GOOD, "sample": 3}, {"problem": "nope", "reply": GOOD}]
    candidates = write_jsonl(tmp_path / "candidates.jsonl", rows)
    assert run_batch(problems_file, candidates, tmp_path / "out.parquet", cache) == 0
    captured = capsys.readouterr()
    records = pd.read_parquet(tmp_path / "out.parquet")
    assert records["row"].tolist() == [0, 1, 2, 3]
    assert records["status"].tolist()[:3] == ["correct", "hacked", "correct"], records[["status", "error"]].to_dict(
        "records")  # why, when it fails: CI of 8c0049d saw the matmul row a runtime_error once (not reproduced)
    assert records["cached"].tolist()[:3] == [True, False, False]  # the first run's verdict is served
    assert json.loads(records["hack_reasons"][1]) and "decoy" in json.loads(records["hack_reasons"][1])
    assert records["problem_key"].tolist()[:3] == ["L1/relu2", "L1/relu2", "L1/matmul"]
    unknown = records.iloc[3]
    assert unknown["input_error"] and pd.isna(unknown["status"]) and "unknown problem 'nope'" in unknown["error"]
    assert "4 rows: 3 evaluated (1 from the cache), 1 input errors" in captured.out
    assert "correct 0.667" in captured.out and "hacked 0.333" in captured.out and "fast@1.2 0.000" in captured.out
    assert "row 3 (candidates.jsonl:4): unknown problem 'nope'" in captured.err

    # the same replies again, as a folder of files named after the problems: every verdict from the cache
    folder = tmp_path / "replies"
    folder.mkdir()
    assert GOOD.endswith("\n")  # so the block below holds exactly GOOD: the cache keys the exact code
    (folder / "relu2.md").write_text(f"My kernel:\n```python\n{GOOD}```\n")
    (folder / "matmul.py").write_text(MATMUL_GOOD)
    (folder / "nope.py").write_text(GOOD)
    (folder / "notes.txt").write_text("not a candidate")
    assert run_batch(problems_file, folder, tmp_path / "again.jsonl", cache, "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 3 and summary["evaluated"] == 2 and summary["cached"] == 2
    assert summary["correct"] == 1.0 and summary["fast@1"] == 0.0 and summary["input_errors"] == 1
    text = (tmp_path / "again.jsonl").read_text()
    assert "NaN" not in text and "Infinity" not in text
    again = [json.loads(line) for line in text.splitlines()]
    assert [r["problem"] for r in again] == ["matmul", "nope", "relu2"]
    assert [r["cached"] for r in again] == [True, None, True]


def test_batch_argument_errors(tmp_path, problems_file, capsys):
    candidates = write_jsonl(tmp_path / "c.jsonl", [{"problem": "relu2", "reply": GOOD}])
    assert main(["eval", str(problems_file), str(candidates), "--device", "cpu"]) == 2
    assert "needs --out" in capsys.readouterr().err
    assert run_batch(problems_file, candidates, tmp_path / "out.csv", tmp_path / "cache") == 2
    assert "must end in one of" in capsys.readouterr().err
    assert run_batch(problems_file, tmp_path / "missing.jsonl", tmp_path / "o.jsonl", tmp_path / "cache") == 2
    assert "no such file" in capsys.readouterr().err
    assert run_batch(tmp_path / "missing.parquet", candidates, tmp_path / "o.jsonl", tmp_path / "cache") == 2
    assert "does not exist" in capsys.readouterr().err
    good = "drk/examples/relu2/candidates/good.py"
    assert main(["eval", "drk/examples/relu2/problem.py", good, "--out", "x.parquet"]) == 2
    assert "--out is for a batch" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists()  # nothing ran


def test_candidates_from_parquet_and_malformed_rows(tmp_path):
    pd.DataFrame([{"problem": "relu2", "reply": GOOD, "extra": 1}]).to_parquet(tmp_path / "c.parquet")
    assert [(r.problem, r.reply) for r in load_candidates(tmp_path / "c.parquet")] == [("relu2", GOOD)]
    path = tmp_path / "bad.jsonl"
    path.write_text('{"problem": "relu2"}\n\n[1, 2]\n{oops\n{"problem": "relu2", "reply": "r"}\n')
    rows = load_candidates(path)
    assert [r.row for r in rows] == [0, 1, 2, 3]
    assert [r.source for r in rows] == ["bad.jsonl:1", "bad.jsonl:3", "bad.jsonl:4", "bad.jsonl:5"]
    assert "no 'reply'" in rows[0].error and "must be an object" in rows[1].error and "not JSON" in rows[2].error
    # one row nested past the parser's depth, one not UTF-8: each that row's error, never the batch's (attacker
    # review, 2026-12-02: a RecursionError and a UnicodeDecodeError ended the whole batch)
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_bytes(b'{"problem": "relu2", "reply": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
                        + b'{"problem": "relu2", "reply": "\xff\xfe"}\n' + b'{"problem": "relu2", "reply": "r"}\n')
    hostile_rows = load_candidates(hostile)
    assert [r.source for r in hostile_rows] == ["hostile.jsonl:1", "hostile.jsonl:2", "hostile.jsonl:3"]
    assert "not JSON" in hostile_rows[0].error and "not UTF-8" in hostile_rows[1].error
    assert hostile_rows[2].error is None
    assert rows[3].error is None
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no rows"):
        load_candidates(tmp_path / "empty")


def test_problem_names_and_keys():
    source = example_problem("relu2").source
    problems = [Problem.from_source(source, "1_Relu", level=1), Problem.from_source(source, "1_Relu", level=2),
                Problem.from_source(source, "2_Other", level=2)]
    resolve = problem_resolver(problems)
    assert resolve("L2/1_Relu") is problems[1] and resolve("2_Other.py") is problems[2]
    assert "ambiguous: use one of ['L1/1_Relu', 'L2/1_Relu']" in resolve("1_Relu")
    assert "unknown problem 'x'" in resolve("x")


class FakePool:
    """Answers every pair with a fixed result (no evaluation), recording what it was asked."""

    def __init__(self, result):
        self.result, self.pairs = result, []

    def map(self, pairs, config=None):
        self.pairs = list(pairs)
        return [self.result for _ in self.pairs]


def test_records_are_strict_json_and_parquet(tmp_path):
    from drk.gym import EvalResult

    result = EvalResult(status="correct", correct=True, speedup=math.inf, max_abs_err=math.nan,
                        stage_s={"judge": math.nan}, hack_reasons=[])
    problems = [example_problem("relu2")]
    pool = FakePool(result)
    rows = [CandidateRow(0, "problem", GOOD, "a"), CandidateRow(1, "problem", None, "b", "the row has no 'reply' text")]
    records = evaluate_batch(problems, rows, pool)
    assert len(pool.pairs) == 1 and records[1]["input_error"] and records[1]["error"].startswith("the row has no")
    text = write_records(records, tmp_path / "r.jsonl").read_text()
    assert "NaN" not in text and "Infinity" not in text
    first = json.loads(text.splitlines()[0])
    assert first["speedup"] is None and first["max_abs_err"] is None and first["stage_s"] == {"judge": "nan"}
    frame = pd.read_parquet(write_records(records, tmp_path / "r.parquet"))
    assert frame["speedup"].isna().all() and json.loads(frame["stage_s"][0]) == {"judge": "nan"}
    summary = batch_summary(records)
    assert summary["evaluated"] == 1 and summary["input_errors"] == 1 and summary["correct"] == 1.0
