"""One RL step's signals from one played batch, as a pure function: :func:`score_batch`.

Given the trajectories of a batch and the trainer's per-token log-probs of their completions, everything the update
needs follows without a model, a trainer or TRL: the per-turn sample table and its rewards (Eq. 1 / Eq. 8), the keep
masks (PRS Eq. 9, MRS Eq. 6, the authors' filters, environment failures), the turn-level advantages (drk.rl, by
explicit ids), their per-token tensors, the MRS diagnostics, the ``episodes.jsonl`` records and the step's metrics.
:class:`drk.train.trainer.MultiTurnGRPOTrainer` is the adapter around it: it plays the batch, calls this, and hands
TRL the keys its loss reads.

Every mask here follows drk.rl's one convention: *keep*, True = the sample takes gradient.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from drk.rl import (
    MRSConfig,
    MRSDiagnostics,
    PRSConfig,
    after_success_keep_mask,
    compute_advantages,
    flat_group_keep_mask,
    mrs_mask,
    prs_keep_mask,
)
from drk.train.rollout import Trajectory
from drk.train.samples import (
    episode_records,
    per_turn_slices,
    rollout_logprob_slices,
    token_tensors,
    turn_table,
)

if TYPE_CHECKING:
    import torch

    from drk.train.config import RLConfig

#: The authors' filters (drk.rl.filters) by the name their metric and config switch carry.
FILTERS: tuple[str, ...] = ("flat_group", "after_success")


@dataclass
class BatchSignals:
    """What one batch gives the update and the logs. Per-sample arrays have shape (n,), one entry per table row.

    ``keep`` is the final keep mask: ``keep_prs & keep_mrs``, the filters that are switched on, and no environment
    failure (a sample the environment could not judge says nothing about the policy). ``keep_filters`` holds every
    filter's keep mask, computed whether it is on or not, so its effect is logged either way.
    """

    trajectories: list[Trajectory]
    table: dict[str, np.ndarray]  # drk.train.samples.turn_table: ids, token spans, rewards, verdicts
    keep_prs: np.ndarray
    keep_mrs: np.ndarray
    keep_filters: dict[str, np.ndarray]  # name in FILTERS -> keep mask
    keep: np.ndarray
    advantages: np.ndarray  # drk.rl.compute_advantages(keep=keep): 0 outside keep, baselines unchanged
    token_advantages: torch.Tensor  # (B, C): each reply token carries its turn's advantage, 0 elsewhere
    loss_mask: torch.Tensor  # (B, C): 1 on reply tokens of kept samples; 0 on padding, feedback, rejected turns
    rollout_logps: list[np.ndarray]  # per sample: the sampler's log-probs of its reply tokens (NaN unknown)
    train_logps: list[np.ndarray]  # per sample: the trainer's log-probs of the same tokens
    mrs: MRSDiagnostics | None  # None for an empty batch
    records: list[dict[str, Any]]  # episodes.jsonl rows
    metrics: dict[str, float] = field(default_factory=dict)  # drk.train.logs.METRICS of this batch


def score_batch(trajectories: list[Trajectory], train_logps: torch.Tensor, config: RLConfig,
                step: int) -> BatchSignals:
    """The signals of RL step ``step`` (1-based) from its played ``trajectories``.

    Args:
        trajectories: the batch; ``trajectories[i]`` is training row ``i`` (its ``completion_ids`` hold every turn).
        train_logps: shape (B, C), the trainer's per-token log-probs of the padded completions (no grad); its width
            and device are those of the token tensors returned.
        config: the run's :class:`~drk.train.config.RLConfig` (rewards, estimator, PRS/MRS, filters).
        step: the optimizer step this batch is for, from 1; it seeds the PRS draws with ``(config.seed, step - 1)``
            and stamps the records.
    """
    from drk.train.logs import batch_metrics

    cfg = config
    table = reward_table(trajectories, cfg)
    train_slices, rollout_slices = per_turn_slices(train_logps, table), rollout_logprob_slices(trajectories, table)
    keep_prs = prs_keep_mask(table["correct"], table["coverage"], _prs_config(cfg),
                             rng=np.random.default_rng([cfg.seed, step - 1])).astype(bool)
    keep_mrs, mrs = _mrs(train_slices, rollout_slices, table, cfg)
    # A trajectory with a turn the environment could not judge has no known return: it is left out of the loss and
    # of every group's baseline and filter (its 0 reward once counted as a failure in its group's mean and in its
    # earlier turns' reward-to-go, attacker review 2026-12-02), as if it had not been sampled.
    judged = judged_trajectories(table)
    sub = {name: column[judged] for name, column in table.items()}
    keep_filters = {name: _scatter(mask, judged, True) for name, mask in filter_keep_masks(sub, cfg).items()}
    keep = keep_prs & keep_mrs & judged
    for name, on in (("flat_group", cfg.drop_flat_groups), ("after_success", cfg.mask_failures_after_success)):
        if on:
            keep &= keep_filters[name]
    advantages = _scatter(compute_advantages(sub["reward"], sub["prompt_id"], sub["traj_id"], sub["turn"],
                                             estimator=cfg.estimator, gamma=cfg.gamma, keep=keep[judged],
                                             level=cfg.advantage_level), judged, 0.0)
    token_adv, loss_mask = token_tensors(trajectories, table, advantages, keep, train_logps.size(1),
                                         device=train_logps.device)
    signals = BatchSignals(
        trajectories=trajectories, table=table, keep_prs=keep_prs, keep_mrs=keep_mrs, keep_filters=keep_filters,
        keep=keep, advantages=advantages, token_advantages=token_adv, loss_mask=loss_mask,
        rollout_logps=rollout_slices, train_logps=train_slices, mrs=mrs,
        records=episode_records(table, advantages, keep_prs, keep_mrs, step),
    )
    signals.metrics = batch_metrics(signals, max_turns=cfg.max_turns)
    return signals


def judged_trajectories(table: dict[str, np.ndarray]) -> np.ndarray:
    """Rows whose trajectory has no ``env_error`` turn (shape (n,), bool)."""
    unjudged = {(p, t) for p, t, e in zip(table["prompt_id"], table["traj_id"], table["env_error"]) if e}
    return np.array([(p, t) not in unjudged for p, t in zip(table["prompt_id"], table["traj_id"])], dtype=bool)


def _scatter(values: np.ndarray, rows: np.ndarray, fill: Any) -> np.ndarray:
    """``values`` (one per True of ``rows``) back at their rows of the whole table; ``fill`` elsewhere."""
    out = np.full(rows.shape, fill, dtype=np.asarray(values).dtype if len(values) else type(fill))
    out[rows] = values
    return out


def reward_table(trajectories: list[Trajectory], config: RLConfig) -> dict[str, np.ndarray]:
    """:func:`~drk.train.samples.turn_table` with the run's reward settings (Eq. 1, or Eq. 8 with the PR term)."""
    return turn_table(trajectories, use_profiling_ratio=config.use_profiling_ratio, speedup_cap=config.speedup_cap,
                      scale=config.reward_scale)


def episode_return(completions: list, trajectory: list[Trajectory], config: RLConfig, **kwargs: Any) -> list[float]:
    """Undiscounted return ``sum_t R_t`` of each trajectory: TRL's reward function (logged by TRL as
    ``rewards/episode_return/mean``); the update's advantages come from :func:`score_batch`, per turn."""
    table = reward_table(trajectory, config)
    return [float(table["reward"][table["row"] == i].sum()) for i in range(len(trajectory))]


def filter_keep_masks(table: dict[str, np.ndarray], config: RLConfig) -> dict[str, np.ndarray]:
    """Each of the authors' filters' keep mask (drk.rl.filters) on the table, whether it is switched on or not."""
    ids = (table["reward"], table["prompt_id"], table["traj_id"], table["turn"])
    return {"flat_group": flat_group_keep_mask(*ids, min_std=config.flat_group_min_std),
            "after_success": after_success_keep_mask(*ids)}


def _prs_config(cfg: RLConfig) -> PRSConfig:
    return PRSConfig(mode=cfg.prs, tau=cfg.prs_tau, s=cfg.prs_s, on_missing=cfg.prs_on_missing, seed=cfg.seed)


def _mrs(train_slices: list[np.ndarray], rollout_slices: list[np.ndarray], table: dict[str, np.ndarray],
         cfg: RLConfig) -> tuple[np.ndarray, MRSDiagnostics | None]:
    """MRS keep mask and diagnostics (computed even when MRS is off, to calibrate its window)."""
    if len(table["row"]) == 0:
        return np.ones(0, dtype=bool), None
    config = MRSConfig(low=cfg.mrs_low, high=cfg.mrs_high, token_veto=cfg.mrs_token_veto, enabled=cfg.mrs)
    keep, diag = mrs_mask(train_slices, rollout_slices, table["prompt_id"], table["traj_id"], config=config)
    return np.asarray(keep, bool), diag
