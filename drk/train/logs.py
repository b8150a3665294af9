"""Training metrics: the one table of names, their computation per batch, and the JSONL log.

Every optimizer step appends one JSON line to ``<out_dir>/log.jsonl`` holding TRL's own metrics
(``loss``, ``grad_norm``, ``entropy``, ``learning_rate``, ``rewards/episode_return/mean``, ...) and ours
below; the same dict goes to TRL's ``report_to`` backends. Per-sample rows go to ``<out_dir>/episodes.jsonl``
(fields: step, problem, prompt_id, sample, turn, status, correct, hacked, speedup, coverage, reward, advantage,
keep_prs, keep_mrs, scripted, reply_tokens), readable by ``drk.metrics``. With ``drop_flat_groups`` or
``mask_failures_after_success`` on, ``advantage`` is also 0 on the rows ``drk.rl.flat_group_keep_mask`` /
``drk.rl.after_success_keep_mask`` drop; both are functions of (reward, prompt_id, sample, turn), so recomputable.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from transformers import TrainerCallback

from drk.jsonl import append_jsonl

if TYPE_CHECKING:
    from drk.train.step import BatchSignals

#: Our metric names (TRL adds its own: loss, grad_norm, entropy, clip_ratio/*, completions/*, ...).
METRICS: dict[str, str] = {
    "rl/reward_mean": "mean turn reward R_t (Eq. 1 / Eq. 8) over all samples",
    "rl/adv_mean": "mean advantage over kept samples",
    "rl/adv_std": "std of advantages over kept samples",
    "rl/adv_abs_max": "largest |advantage|",
    "rl/samples": "number of (trajectory, turn) samples in the batch",
    "rl/samples/turn{t}": "samples at turn t (N_t shrinks when episodes end early)",
    "rl/kept_frac": "share of samples in the loss after PRS, MRS and the authors' filters that are on",
    "rl/prs_masked_frac": "share of samples rejected by PRS (Eq. 9)",
    "rl/mrs_masked_frac": "share of samples rejected by MRS (Eq. 6), or that would be when MRS is off",
    "rl/flat_group_masked_frac": "share of samples in prompts whose last-turn rewards have std < "
    "flat_group_min_std (drk.rl.flat_group_keep_mask); dropped only with drop_flat_groups, logged either way",
    "rl/after_success_masked_frac": "share of samples with reward <= 0 after a reward > 0 earlier in their "
    "trajectory (drk.rl.after_success_keep_mask); dropped only with mask_failures_after_success, logged either way",
    "rl/mrs_ratio_mean": "mean trajectory geometric-mean ratio w = pi_train / pi_rollout",
    "rl/mrs_ratio_min": "smallest w in the batch",
    "rl/mrs_ratio_max": "largest w in the batch",
    "gym/correct_rate/turn{t}": "share of samples at turn t that are correct and not hacked",
    "gym/fast@{p}/turn{t}": "Fast@p at turn t (drk.metrics.fast_p; 0 on CPU, where speedup is None)",
    "gym/hacking_ratio": "share of samples with hacking evidence (judged hacked, or flagged with the check off)",
    "gym/format_error_rate": "share of samples with status format_error",
    "gym/compile_error_rate": "share of samples with status compile_error",
    "gym/env_error_rate": "share of samples the environment failed to judge (e.g. GPU OOM); their trajectories leave the loss and baselines",
    "gym/profiling_ratio": "mean profiling ratio PR of correct samples (absent on CPU)",
    "rollout/kl_k1": "per-token KL(rollout || train), k1 estimator, on sampled reply tokens",
    "rollout/kl_k3": "per-token KL(rollout || train), k3 estimator",
    "rollout/ppl_rollout": "perplexity of the sampled replies under the rollout engine",
    "rollout/ppl_train": "perplexity of the same tokens under the trainer",
    "rollout/turns_mean": "mean number of turns per trajectory",
    "time/rollout_s": "wall time of the whole multi-turn rollout",
    "time/generate_s": "time spent generating",
    "time/env_s": "time spent waiting on the environment (overlaps generation)",
}

FAST_PS = (1.0, 1.2)


def batch_metrics(signals: BatchSignals, *, max_turns: int) -> dict[str, float]:
    """The :data:`METRICS` of one batch (NaN/None where undefined), from :func:`drk.train.step.score_batch`'s
    signals; the ``time/*`` metrics come from the rollout (:func:`timing_metrics`)."""
    from drk.metrics import fast_p

    table, records, advantages, keep = signals.table, signals.records, signals.advantages, signals.keep
    n = len(records)
    out: dict[str, float] = {"rl/samples": float(n)}
    if n == 0:
        return out
    statuses = table["status"]
    kept_adv = advantages[keep]
    mrs = signals.mrs
    out.update({
        "rl/reward_mean": float(np.mean(table["reward"])),
        "rl/adv_mean": float(np.mean(kept_adv)) if kept_adv.size else math.nan,
        "rl/adv_std": float(np.std(kept_adv)) if kept_adv.size else math.nan,
        "rl/adv_abs_max": float(np.max(np.abs(advantages))),
        "rl/kept_frac": float(np.mean(keep)),
        "rl/prs_masked_frac": float(np.mean(~signals.keep_prs)),
        "rl/mrs_masked_frac": float(mrs.masked_frac) if mrs is not None else math.nan,
        **{f"rl/{name}_masked_frac": float(np.mean(~kept)) for name, kept in signals.keep_filters.items()},
        "gym/hacking_ratio": float(np.mean(table["hack_evidence"])),
        "gym/format_error_rate": float(np.mean(statuses == "format_error")),
        "gym/compile_error_rate": float(np.mean(statuses == "compile_error")),
        "gym/env_error_rate": float(np.mean(table["env_error"])),
        "rollout/turns_mean": float(n / len(set(table["row"].tolist()))),
    })
    if mrs is not None:
        out.update({"rl/mrs_ratio_mean": mrs.ratio_mean, "rl/mrs_ratio_min": mrs.ratio_min,
                    "rl/mrs_ratio_max": mrs.ratio_max})
    correct_pr = table["coverage"][table["correct"] & ~np.isnan(table["coverage"])]
    out["gym/profiling_ratio"] = float(np.mean(correct_pr)) if correct_pr.size else math.nan
    for t in range(1, max_turns + 1):
        at_t = table["turn"] == t
        out[f"rl/samples/turn{t}"] = float(at_t.sum())
        if at_t.any():
            out[f"gym/correct_rate/turn{t}"] = float(np.mean(table["correct"][at_t]))
            for p in FAST_PS:
                out[f"gym/fast@{p:g}/turn{t}"] = float(fast_p(records, p, turn=t))
    if mrs is not None and mrs.num_tokens:  # KL as MRS measured it, on the tokens both sides scored
        out.update({"rollout/kl_k1": mrs.kl_k1, "rollout/kl_k3": mrs.kl_k3})
    out.update(_perplexities(signals.rollout_logps, signals.train_logps))
    return out


def timing_metrics(timings: dict[str, float]) -> dict[str, float]:
    """The ``time/*`` metrics of a rollout's stopwatch (``gen_s``, ``env_s``, ``rollout_s``)."""
    names = {"gen_s": "time/generate_s", "env_s": "time/env_s", "rollout_s": "time/rollout_s"}
    return {names[k]: v for k, v in timings.items() if k in names}


def _perplexities(rollout_logps: list[np.ndarray], train_logps: list[np.ndarray]) -> dict[str, float]:
    """Perplexities of the sampled replies under the rollout engine and the trainer, on the tokens both scored."""
    lr = np.concatenate(rollout_logps) if rollout_logps else np.zeros(0)
    lt = np.concatenate(train_logps) if train_logps else np.zeros(0)
    ok = np.isfinite(lr) & np.isfinite(lt)
    if not ok.any():
        return {}
    return {"rollout/ppl_rollout": float(np.exp(-np.mean(lr[ok]))),
            "rollout/ppl_train": float(np.exp(-np.mean(lt[ok])))}


class JsonlLogCallback(TrainerCallback):
    """Appends every ``Trainer.log`` call as one JSON line ``{"step": N, ...metrics}`` to ``path``."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs:
            return
        append_jsonl(self.path, [{"step": state.global_step, **{k: _jsonable(v) for k, v in logs.items()}}])


def _jsonable(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if hasattr(v, "item"):
        return v.item()
    return v
