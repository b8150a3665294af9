"""The tiny setup on a GPU: real CUDA evaluation (speedup, profiling ratio), Eq. 8 reward, soft PRS, MRS, timing.

Prints a timing summary (``pytest -s``) so the device run records real step times.
"""

import json

import pytest
import torch

from drk.jsonl import read_jsonl
from drk.train.api import build_trainer
from tests.train.conftest import tiny_config

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_tiny_rl_on_gpu(tmp_path, tiny_model_dir, scripted_file, lora):
    cfg = tiny_config(tmp_path, tiny_model_dir, scripted_file, device="cuda", steps=3, max_turns=3,
                      rollouts_per_prompt=4, micro_batch_size=2, max_reply_tokens=32, lora=lora,
                      use_profiling_ratio=True, prs="soft", prs_on_missing="keep", mrs=True, env_workers=4,
                      eval_config={}, dtype="float32")  # bf16 rollouts vs trainer leave MRS's window: see notes
    trainer = build_trainer(cfg)
    assert next(trainer.model.parameters()).is_cuda
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    trainer.train()
    records = read_jsonl(tmp_path / "run" / "episodes.jsonl")
    log = [row for row in read_jsonl(tmp_path / "run" / "log.jsonl") if "loss" in row]
    keys = ("step_time", "time/rollout_s", "time/generate_s", "time/env_s", "rl/reward_mean",
            "gym/profiling_ratio", "rl/prs_masked_frac", "rl/mrs_masked_frac", "rollout/kl_k1")
    print(f"\n[gpu timing lora={lora}] {torch.cuda.get_device_name()}")
    print("\n".join(json.dumps({k: row.get(k) for k in ("step", *keys)}) for row in log))
    assert any(not torch.equal(before[n], p.detach()) for n, p in trainer.model.named_parameters() if n in before)

    scripted = [r for r in records if r["scripted"]]
    assert scripted and all(r["status"] == "correct" for r in scripted)
    assert all(r["speedup"] is not None and r["coverage"] is not None for r in scripted)  # measured on the GPU
    # Eq. 8: R = 1 + min(speedup, 3) + PR
    assert all(r["reward"] == pytest.approx(1 + min(r["speedup"], 3) + r["coverage"]) for r in scripted)
    assert len(log) == 3
