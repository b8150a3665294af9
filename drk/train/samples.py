"""From played trajectories to training signals: the per-turn sample table and per-token tensors.

A *sample* is one (trajectory, turn). The table holds one row per sample with explicit ids
``(prompt_id, traj_id, turn)`` and the token span of the reply inside its trajectory row; advantages and
rejection masks are computed on the table by ``drk.rl`` (never from row order) and scattered back onto tokens
here. Everything is numpy/torch on plain data so it is testable without a model.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from drk.rl import turn_reward
from drk.train.rollout import Trajectory

#: Per-sample columns of :func:`turn_table` (all shape (n,)).
TABLE_COLUMNS = ("row", "prompt_id", "traj_id", "turn", "start", "end", "reward", "correct", "hacked",
                 "hack_evidence", "speedup", "coverage", "status", "problem", "scripted", "env_error")


def turn_table(trajs: list[Trajectory], *, use_profiling_ratio: bool = False, speedup_cap: float = 3.0,
               scale: float = 1.0) -> dict[str, np.ndarray]:
    """One row per (trajectory, turn) with its ids, reply token span and Eq. 1 / Eq. 8 reward.

    Args:
        trajs: played trajectories; ``trajs[i]`` is training row ``i``.
        use_profiling_ratio, speedup_cap, scale: forwarded to :func:`drk.rl.turn_reward`.

    Returns:
        Dict of arrays (see :data:`TABLE_COLUMNS`); ``speedup``/``coverage`` are NaN where not measured.
    """
    rows: list[dict[str, Any]] = []
    for i, tr in enumerate(trajs):
        for t in tr.turns:
            res = t.result
            rows.append({
                "row": i, "prompt_id": tr.prompt_id, "traj_id": tr.traj_id, "turn": t.turn,
                "start": t.start, "end": t.end,
                "reward": turn_reward(res, use_profiling_ratio=use_profiling_ratio, speedup_cap=speedup_cap,
                                      scale=scale),
                "correct": bool(res.get("correct")) and not bool(res.get("hacked")),
                "hacked": bool(res.get("hacked")),
                # evidence, also when the environment's hacking check is off (the no-check ablation)
                "hack_evidence": bool(res.get("hacked")) or bool(res.get("hack_reasons")),
                "speedup": _nan_if_none(res.get("speedup")), "coverage": _nan_if_none(res.get("coverage")),
                "status": res.get("status", ""), "problem": getattr(tr.problem, "name", str(tr.problem)),
                "scripted": t.scripted,
                "env_error": bool(res.get("env_error")),  # the environment failed: no verdict, no gradient
            })
    return {col: np.array([r[col] for r in rows]) for col in TABLE_COLUMNS} if rows else _empty_table()


def per_turn_slices(values, table: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Cut a (B, C) per-token array into one 1-D array per sample: ``values[row, start:end]``."""
    arr = values.detach().float().cpu().numpy() if hasattr(values, "detach") else np.asarray(values, float)
    return [arr[r, s:e] for r, s, e in zip(table["row"], table["start"], table["end"], strict=True)]


def rollout_logprob_slices(trajs: list[Trajectory], table: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The sampler's log-probs of each sample's reply tokens (NaN where unknown, e.g. scripted replies)."""
    return [np.asarray(trajs[r].logprobs[s:e], dtype=float)
            for r, s, e in zip(table["row"], table["start"], table["end"], strict=True)]


def token_tensors(trajs: list[Trajectory], table: dict[str, np.ndarray], advantages: np.ndarray,
                  keep: np.ndarray, width: int, device=None):
    """Scatter per-sample advantages and keep flags onto tokens.

    Args:
        trajs: the batch; row ``i`` of the outputs is ``trajs[i]``'s completion.
        table: :func:`turn_table` of ``trajs``.
        advantages: shape (n,), one per table row.
        keep: shape (n,) bool, False for samples rejected by PRS/MRS.
        width: padded completion length C of the batch.

    Returns:
        ``(adv, loss_mask)``, float32 tensors of shape (B, C): ``adv`` holds each reply token's turn advantage
        (0 elsewhere); ``loss_mask`` is 1 on reply tokens of kept samples and 0 on prompt padding, feedback
        tokens and rejected samples.
    """
    import torch

    adv = torch.zeros(len(trajs), width, dtype=torch.float32)
    mask = torch.zeros(len(trajs), width, dtype=torch.float32)
    for r, s, e, a, k in zip(table["row"], table["start"], table["end"], advantages, keep, strict=True):
        adv[r, s:e] = float(a)
        mask[r, s:e] = float(bool(k))
    for i, tr in enumerate(trajs):  # feedback tokens sit between reply spans: never in the loss
        env = torch.tensor(tr.env_mask, dtype=torch.float32)
        mask[i, : len(env)] *= env
    return adv.to(device), mask.to(device)


def episode_records(table: dict[str, np.ndarray], advantages: np.ndarray, keep_prs: np.ndarray,
                    keep_mrs: np.ndarray, step: int) -> list[dict[str, Any]]:
    """JSON-ready rows for ``episodes.jsonl`` and ``drk.metrics`` (problem, sample, turn, correct, ...)."""
    out = []
    for i in range(len(table["row"])):
        out.append({
            "step": step, "problem": str(table["problem"][i]), "prompt_id": _py(table["prompt_id"][i]),
            "sample": int(table["traj_id"][i]), "turn": int(table["turn"][i]),
            "status": str(table["status"][i]), "correct": bool(table["correct"][i]),
            "hacked": bool(table["hacked"][i]), "speedup": _none_if_nan(table["speedup"][i]),
            "coverage": _none_if_nan(table["coverage"][i]), "reward": float(table["reward"][i]),
            "advantage": float(advantages[i]), "keep_prs": bool(keep_prs[i]), "keep_mrs": bool(keep_mrs[i]),
            "scripted": bool(table["scripted"][i]), "reply_tokens": int(table["end"][i] - table["start"][i]),
        })
    return out


def _empty_table() -> dict[str, np.ndarray]:
    return {col: np.array([]) for col in TABLE_COLUMNS}


def _nan_if_none(x) -> float:
    return math.nan if x is None else float(x)


def _none_if_nan(x) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _py(x):
    return x.item() if hasattr(x, "item") else x
