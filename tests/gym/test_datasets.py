"""Problems from datasets: every source kind, KernelBench's column layout, column mapping, row errors (offline)."""

import json

import pandas as pd
import pytest

from drk.examples import example_problem
from drk.gym import load_problems
from drk.gym.datasets import is_dataset_spec, problems_from_rows

RELU2 = example_problem("relu2").source
MATMUL = example_problem("matmul").source


def kernelbench_rows() -> list[dict]:
    """Rows in the column layout of KernelBench's Hugging Face release (names as ``ID_Name``)."""
    return [
        {"code": MATMUL, "level": 1, "name": "2_Matmul", "problem_id": 2},
        {"code": RELU2, "level": 1, "name": "1_Relu2", "problem_id": 1},
        {"code": RELU2, "level": 2, "name": "1_Relu2", "problem_id": 1},
    ]


def check_kernelbench(problems) -> None:
    assert [p.key for p in problems] == ["L1/1_Relu2", "L1/2_Matmul", "L2/1_Relu2"]
    assert [p.problem_id for p in problems] == [1, 2, 1]
    assert problems[0].source == RELU2 and problems[1].source == MATMUL


@pytest.mark.parametrize("suffix", ["parquet", "jsonl", "csv"])
def test_files(tmp_path, suffix):
    path = tmp_path / f"problems.{suffix}"
    frame = pd.DataFrame(kernelbench_rows())
    if suffix == "parquet":
        frame.to_parquet(path, index=False)
    elif suffix == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in kernelbench_rows()))
    else:
        frame.to_csv(path, index=False)
    assert is_dataset_spec(path) and is_dataset_spec(str(path))
    check_kernelbench(load_problems(path))


def test_datasets_objects_and_saved_folders(tmp_path):
    datasets = pytest.importorskip("datasets")
    rows = kernelbench_rows()
    table = datasets.Dataset.from_list(rows)
    check_kernelbench(load_problems(table))
    by_level = datasets.DatasetDict({"level_1": datasets.Dataset.from_list(rows[:2]),
                                     "level_2": datasets.Dataset.from_list(rows[2:])})
    check_kernelbench(load_problems(by_level))
    assert [p.key for p in load_problems(by_level, split="level_2")] == ["L2/1_Relu2"]
    with pytest.raises(ValueError, match="no split 'level_9'.*level_1"):
        load_problems(by_level, split="level_9")
    table.save_to_disk(tmp_path / "one")
    by_level.save_to_disk(tmp_path / "dict")
    check_kernelbench(load_problems(tmp_path / "one"))
    check_kernelbench(load_problems(str(tmp_path / "dict")))
    check_kernelbench(load_problems(pd.DataFrame(rows)))


def test_hub_ids_go_through_load_dataset(monkeypatch):
    datasets = pytest.importorskip("datasets")
    calls = []

    def fake_load_dataset(name, split=None):
        calls.append((name, split))
        parts = {"level_1": datasets.Dataset.from_list(kernelbench_rows()[:2]),
                 "level_2": datasets.Dataset.from_list(kernelbench_rows()[2:])}
        return parts[split] if split else datasets.DatasetDict(parts)

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    assert [p.key for p in load_problems("hf:ScalingIntelligence/KernelBench:level_1")] == ["L1/1_Relu2", "L1/2_Matmul"]
    check_kernelbench(load_problems("hf:ScalingIntelligence/KernelBench"))
    assert calls == [("ScalingIntelligence/KernelBench", "level_1"), ("ScalingIntelligence/KernelBench", None)]


def test_column_mapping_and_defaults(tmp_path):
    path = tmp_path / "other.jsonl"
    rows = [{"reference_src": RELU2, "task": "relu2.py", "difficulty": "3"}, {"reference_src": MATMUL, "task": "07_mm"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    problems = load_problems(path, columns={"code": "reference_src", "name": "task", "level": "difficulty"})
    assert [(p.name, p.level, p.problem_id) for p in problems] == [("07_mm", None, 7), ("relu2", 3, None)]
    unnamed = problems_from_rows([{"code": RELU2}, {"code": MATMUL}])
    assert [p.name for p in unnamed] == ["row0", "row1"]
    with pytest.raises(ValueError, match=r"missing column 'code' \(drk field 'code'\).*reference_src"):
        load_problems(path)
    with pytest.raises(ValueError, match=r"missing column 'title' \(drk field 'name'\)"):
        load_problems(path, columns={"code": "reference_src", "name": "title"})
    with pytest.raises(ValueError, match="unknown drk fields \\['source'\\]"):
        load_problems(path, columns={"source": "reference_src"})
    with pytest.raises(ValueError, match="datasets only"):
        load_problems("drk:level1", columns={"code": "x"})


def test_bad_rows_name_the_row(tmp_path):
    rows = kernelbench_rows()
    rows[1] = {"code": "import torch\nclass Model: pass\n", "level": 1, "name": "5_NoInputs"}
    with pytest.raises(ValueError, match=r"row 1 \('5_NoInputs'\).*missing \['get_inputs', 'get_init_inputs'\]"):
        problems_from_rows(rows, source="bad.jsonl")
    rows[1] = {"code": "def (", "level": 1, "name": "6_Syntax"}
    with pytest.raises(ValueError, match=r"bad.jsonl: row 1 \('6_Syntax'\).*does not parse"):
        problems_from_rows(rows, source="bad.jsonl")
    rows[1] = {"code": None, "level": 1, "name": "7_Empty"}
    with pytest.raises(ValueError, match=r"row 1 \('7_Empty'\): column 'code' must hold the reference source"):
        problems_from_rows(rows)
    rows[1] = {"code": RELU2, "level": "two", "name": "8_Level"}
    with pytest.raises(ValueError, match=r"row 1 \('8_Level'\): column 'level' must be an integer"):
        problems_from_rows(rows)
    with pytest.raises(ValueError, match=r"row 1 \('1_Relu2'\) repeats problem 'L1/1_Relu2' of row 0"):
        problems_from_rows([kernelbench_rows()[1]] * 2)
    with pytest.raises(ValueError, match="no rows"):
        problems_from_rows([])
    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text("{not json}\n")
    with pytest.raises(ValueError, match="bad.jsonl:1: not JSON"):
        load_problems(bad_json)
    with pytest.raises(ValueError, match="does not exist"):
        load_problems(tmp_path / "missing.parquet")


def test_paths_and_bundled_specs_unchanged():
    assert not is_dataset_spec("drk:level1") and not is_dataset_spec("drk/examples/relu2/problem.py")
    assert len(load_problems("drk:level1")) > 0
    assert [p.name for p in load_problems("drk/examples/relu2/problem.py")] == ["problem"]


def test_problems_too_deep_to_parse_are_clear_errors(tmp_path):
    """A problem nested past the parser's depth raised RecursionError through load_problems and `drk eval`; a JSONL
    row nested past the JSON parser's did the same (attacker review, 2026-12-02)."""
    from drk.gym import Problem, load_problems

    deep = "import torch\nX = " + "+".join(["1"] * 200_000) + "\n"
    with pytest.raises(ValueError, match="does not parse"):
        Problem.from_source(deep, name="deep")
    rows = tmp_path / "deep.jsonl"
    rows.write_text('{"code": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(ValueError, match="deep.jsonl:1: not JSON"):
        load_problems(str(rows))
