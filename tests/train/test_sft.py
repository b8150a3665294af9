"""Cold-start SFT on multi-turn trajectories: the chat format of the RL trainer, loss on assistant tokens only."""

import json

import pytest
import torch

from drk.chat import PromptFormat
from drk.models import load_tokenizer
from drk.train.sft import SFTRunConfig, build_sft_trainer, load_trajectories, sft


def write_trajectories(path, tokenizer, n=4):
    fmt = PromptFormat(tokenizer)
    messages = fmt.conversation("class Model: pass", ["```python\nA = 1\n```", "```python\nB = 2\n```"],
                                ["FEEDBACK compile error"])
    path.write_text("".join(json.dumps({"messages": messages}) + "\n" for _ in range(n)))
    return path


def test_only_assistant_tokens_get_loss(tmp_path, tiny_model_dir):
    data = write_trajectories(tmp_path / "t.jsonl", load_tokenizer(tiny_model_dir))
    trainer = build_sft_trainer(SFTRunConfig(model=str(tiny_model_dir), data=str(data), out_dir=str(tmp_path),
                                             max_steps=1, device="cpu"))
    row = trainer.train_dataset[0]
    tok = trainer.processing_class
    trained = tok.decode([t for t, label in zip(row["input_ids"], row["labels"], strict=True) if label != -100])
    assert trained == "```python\nA = 1\n```<|im_end|>```python\nB = 2\n```<|im_end|>"
    assert "FEEDBACK" not in trained and "Model" not in trained


def test_sft_trains_and_saves(tmp_path, tiny_model_dir):
    data = write_trajectories(tmp_path / "t.jsonl", load_tokenizer(tiny_model_dir))
    cfg = SFTRunConfig(model=str(tiny_model_dir), data=str(data), out_dir=str(tmp_path / "out"), max_steps=2,
                       device="cpu", learning_rate=1e-3)
    checkpoint = sft(cfg)
    from transformers import AutoModelForCausalLM

    before = AutoModelForCausalLM.from_pretrained(tiny_model_dir).state_dict()
    after = AutoModelForCausalLM.from_pretrained(checkpoint).state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    assert (checkpoint / "drk_config.json").is_file() and (tmp_path / "out" / "log.jsonl").is_file()


def test_bad_trajectory_file(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"messages": [{"role": "user", "content": "no answer"}]}) + "\n")
    with pytest.raises(ValueError, match="assistant"):
        load_trajectories(bad)
    with pytest.raises(ValueError, match="data"):
        SFTRunConfig()


def test_trajectories_from_parquet_and_datasets(tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    import pandas as pd

    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "class Model: pass"},
                {"role": "assistant", "content": "```python\nA = 1\n```"}]
    rows = [{"messages": messages, "problem": f"p{i}"} for i in range(3)]
    expected = [{"messages": messages}] * 3
    pd.DataFrame(rows).to_parquet(tmp_path / "t.parquet", index=False)
    assert load_trajectories(tmp_path / "t.parquet") == expected
    table = datasets.Dataset.from_list(rows)
    assert load_trajectories(table) == expected
    table.save_to_disk(tmp_path / "saved")
    assert load_trajectories(str(tmp_path / "saved")) == expected
    monkeypatch.setattr(datasets, "load_dataset", lambda name, split=None: table)
    assert load_trajectories("hf:someone/cold-start:train") == expected
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert load_trajectories(tmp_path / "t.jsonl") == expected
    no_answer = datasets.Dataset.from_list([rows[0], {"messages": messages[:2], "problem": "p9"}])
    with pytest.raises(ValueError, match="Dataset: row 1: need .* assistant"):
        load_trajectories(no_answer)
