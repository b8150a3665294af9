"""Pins on the TRL internals drk.train relies on. If one fails after a TRL upgrade, re-check the trainer.

drk.train.trainer overrides one private method (``_generate_and_score_completions``, wrapped with super())
and calls a few others; these tests fail loudly when their upstream shape changes.
"""

import inspect

import trl
from trl import GRPOTrainer
from trl.generation.vllm_generation import VLLMGeneration
from trl.models import unwrap_model_for_generation


def params(fn):
    return list(inspect.signature(fn).parameters)


def test_trl_version_is_pinned():
    assert trl.__version__ == "1.16.0", "drk.train is written against trl 1.16.0: re-check the pins below"


def test_public_seams():
    assert "rollout_func" in params(GRPOTrainer.__init__)
    src = inspect.getsource(GRPOTrainer._generate)
    assert 'extra_fields.pop("env_mask"' in src  # env_mask from rollout_func becomes tool_mask
    assert "self.rollout_func(prompts, self)" in src


def test_private_methods_we_wrap_or_call():
    assert params(GRPOTrainer._generate_and_score_completions) == ["self", "inputs"]
    assert params(GRPOTrainer._get_per_token_logps_and_entropies)[:6] == [
        "self", "model", "input_ids", "attention_mask", "logits_to_keep", "batch_size"]
    assert params(GRPOTrainer._compute_loss) == ["self", "model", "inputs"]


def test_loss_accepts_per_token_advantages_and_tool_mask():
    src = inspect.getsource(GRPOTrainer._compute_loss)
    assert "if advantages.dim() == 1:" in src  # (B, T) advantages pass through unchanged
    assert 'completion_mask * inputs["tool_mask"]' in src  # our loss mask is honoured
    assert 'inputs["num_items_in_batch"]' in src  # dapo normaliser read from the batch we return


def test_generation_helpers():
    assert params(VLLMGeneration.generate)[:4] == ["self", "prompts", "images", "num_generations"]
    assert hasattr(VLLMGeneration, "_iter_named_params") and hasattr(VLLMGeneration, "sync_weights")
    assert "generation_kwargs" in params(unwrap_model_for_generation)
