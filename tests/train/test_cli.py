"""Smoke runs of the entry points ``drk train`` and ``drk sft`` (as wired by drk.cli)."""

import json

from drk.jsonl import read_jsonl
from drk.train.cli import main_sft, main_train
from tests.train.test_sft import write_trajectories


def test_train_cli_one_step(tmp_path, tiny_model_dir):
    out = tmp_path / "run"
    code = main_train(["--config", "configs/rl_tiny_cpu.yaml", "--set", f"model={tiny_model_dir}",
                       "--set", "num_problems=1", "--set", "prompts_per_step=1", "--set", "steps=1",
                       "--set", "max_turns=1", "--set", "max_reply_tokens=4", "--set", f"out_dir={out}"])
    assert code == 0
    checkpoint = out / "checkpoint-final"
    assert (checkpoint / "adapter_config.json").is_file()  # the example config trains a LoRA adapter
    meta = json.loads((checkpoint / "drk_config.json").read_text())
    assert meta["config"]["steps"] == 1 and "git_sha" in meta
    assert [row["step"] for row in read_jsonl(out / "log.jsonl") if "loss" in row] == [1]
    assert len(read_jsonl(out / "episodes.jsonl")) == 2


def test_train_cli_rejects_unknown_keys_and_prints_config(capsys):
    assert main_train(["--set", "stepz=1"]) == 2
    assert "stepz" in capsys.readouterr().err
    assert main_train(["--set", "steps=5", "--print-config"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == 5


def test_sft_cli(tmp_path, tiny_model_dir):
    from drk.models import load_tokenizer

    data = write_trajectories(tmp_path / "t.jsonl", load_tokenizer(tiny_model_dir), n=2)
    code = main_sft(["--config", "configs/sft_tiny_cpu.yaml", "--set", f"model={tiny_model_dir}",
                     "--set", f"data={data}", "--set", "max_steps=1", "--set", f"out_dir={tmp_path / 'sft'}"])
    assert code == 0 and (tmp_path / "sft" / "checkpoint-final" / "config.json").is_file()
