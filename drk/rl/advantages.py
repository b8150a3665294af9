"""Turn-level returns and group-baseline advantage estimators (paper Eqs. 2-5).

Every training sample is one turn of one trajectory, addressed by explicit ``(prompt_id, traj_id, turn)``
indices: nothing here depends on row order or on a padding layout, so the trainer may hand rows over in any
order and get advantages back in that same order.

Groups are "rollouts of the same prompt at the same turn" (the paper's G_t, with N_t members that shrink at
later turns as episodes end early). The estimators differ only in the baseline each member is compared with:

=================  ================================================  =========================================
estimator          advantage of member i (group of N)                 note
=================  ================================================  =========================================
``grpo``           G_i - mean_j G_j                                   self-inclusive: E[g] = (1 - 1/N) grad J
``grpo_std``       (G_i - mean_j G_j) / (std_j G_j + eps)             GRPO as published (std ddof=1, eps 1e-4)
``trloo``          G_i - mean_{j != i} G_j = N/(N-1) (G_i - mean G)   unbiased (Eq. 5); N = 1 -> A = G
``rloo``           same as ``trloo``                                  the name from Ahmadian et al. (2024)
``grpo_rescaled``  N/(N-1) (G_i - mean_j G_j); N = 1 -> A = 0         GRPO at TRLOO's step size (ablation)
=================  ================================================  =========================================

``grpo_rescaled`` equals ``trloo`` in every group of N > 1 and ``grpo`` (0) in a group of one: set against
``grpo`` it isolates GRPO's per-group step-size shrink (1 - 1/N), set against ``trloo`` the lone samples'
gradient, which is where the two differ when episodes end early (groups of varying size).

Rows outside the ``keep`` mask (rejected by MRS, PRS or the authors' filters: drk.rl's one mask convention is
*keep*, True = the row takes gradient) keep their place in their group's baseline and only have their own
advantage set to 0: rejection removes a sample's gradient, not the information its reward carries about how
good the other samples are. ``tests/rl/test_advantages.py`` pins this choice.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Estimator = Literal["grpo", "grpo_std", "grpo_rescaled", "rloo", "trloo"]
Level = Literal["turn", "trajectory"]

ESTIMATORS: tuple[str, ...] = ("grpo", "grpo_std", "grpo_rescaled", "rloo", "trloo")
LEVELS: tuple[str, ...] = ("turn", "trajectory")

#: Added to the group std by ``grpo_std`` so a group with identical returns gets advantage 0, not NaN.
STD_EPS = 1e-4


def turn_returns(rewards, prompt_id, traj_id, turn, *, gamma: float = 1.0) -> np.ndarray:
    """Discounted reward-to-go of every turn: ``G_t = sum_{t' >= t} gamma**(t' - t) * R_t'`` (paper Sec. 3).

    Args:
        rewards: shape (n,), float reward of each turn; must be finite.
        prompt_id: shape (n,), any hashable ids (ints or strings); with ``traj_id`` it names a trajectory.
        traj_id: shape (n,), trajectory id within its prompt.
        turn: shape (n,), integer turn index. The exponent is the difference of turn indices, so a trajectory
            whose turns are numbered 1, 2, 3 or 0, 1, 2 gets the same returns.
        gamma: discount in [0, 1]; 1 is the paper's setting, 0 the "no future reward" ablation.

    Returns:
        shape (n,), float64, in the input row order.

    Raises:
        ValueError: on mismatched shapes, non-finite rewards, gamma outside [0, 1], or two rows with the same
            (prompt_id, traj_id, turn).
    """
    r, _, traj, t = _validate(rewards, prompt_id, traj_id, turn)
    return _returns(r, traj, t, gamma)


def compute_advantages(
    rewards,
    prompt_id,
    traj_id,
    turn,
    *,
    estimator: Estimator = "trloo",
    gamma: float = 1.0,
    keep=None,
    level: Level = "turn",
) -> np.ndarray:
    """Advantages of every turn from per-turn rewards, in any row order (paper Eqs. 3-5).

    Args:
        rewards: shape (n,), finite float reward of each turn (:func:`drk.rl.turn_reward`).
        prompt_id: shape (n,), hashable prompt id of each row.
        traj_id: shape (n,), trajectory id within the prompt.
        turn: shape (n,), integer turn index.
        estimator: one of ``ESTIMATORS`` (see the module table).
        gamma: discount of the turn-level return, in [0, 1].
        keep: optional shape (n,) bool; True marks a row that takes gradient (None: every row). A row outside
            it (rejected by PRS/MRS/the authors' filters: combine their keep masks with ``&``) gets advantage 0
            but its return still counts in its group's baseline.
        level: ``"turn"`` groups by (prompt, turn) and scores each turn by its reward-to-go (the paper).
            ``"trajectory"`` groups by prompt, scores each trajectory by its whole discounted episode return
            (the return of its first turn) and gives every turn of the trajectory that one advantage: the
            single-turn / whole-episode ablation.

    Returns:
        shape (n,), float64, in the input row order. A group of one gets A = G under ``trloo``/``rloo``
        (no baseline exists) and A = 0 under ``grpo``/``grpo_std``/``grpo_rescaled`` (a lone sample is its own
        mean).

    Raises:
        ValueError: on an unknown estimator or level, bad shapes, non-finite rewards, duplicate rows.
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator={estimator!r}: must be one of {ESTIMATORS} ('trloo' is the paper's)")
    if level not in LEVELS:
        raise ValueError(f"level={level!r}: must be one of {LEVELS} ('turn' is the paper's)")
    r, prompt, traj, t = _validate(rewards, prompt_id, traj_id, turn)
    returns = _returns(r, traj, t, gamma)
    if level == "turn":
        score, group = returns, _factorize_pairs(prompt, t)
    else:
        first = _first_turn_rows(traj, t)  # shape (n,): row index of each row's first turn
        score, group = returns[first], prompt
    kept = _as_keep(keep, len(returns))
    # In trajectory mode every turn of a trajectory carries the same score: count each trajectory once.
    counted = np.ones(len(returns), dtype=bool) if level == "turn" else (first == np.arange(len(returns)))
    mean, n, std = _group_stats(score, group, counted)
    adv = _advantage_from_stats(score, mean[group], n[group], std[group], estimator)
    adv[~kept] = 0.0
    return adv


def dense_advantages(returns, alive, *, estimator: Estimator = "trloo") -> np.ndarray:
    """Group advantages on a dense (..., N) layout: the last axis is the group, ``alive`` marks members.

    The vectorised twin of the gathering in :func:`compute_advantages` for simulations (``drk.rl.bias``); both
    hand their group statistics to the same estimator formula.

    Args:
        returns: shape (..., N) float returns; entries where ``alive`` is False are ignored.
        alive: shape (..., N) bool; which slots are members of the group.
        estimator: one of ``ESTIMATORS``.

    Returns:
        shape (..., N) float64 advantages, 0 where ``alive`` is False.
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator={estimator!r}: must be one of {ESTIMATORS}")
    g = np.asarray(returns, dtype=float)
    alive = np.asarray(alive, dtype=bool)
    g0 = np.where(alive, g, 0.0)
    n = alive.sum(axis=-1, keepdims=True)  # shape (..., 1)
    mean = g0.sum(axis=-1, keepdims=True) / np.maximum(n, 1)
    sq = np.where(alive, (g - mean) ** 2, 0.0).sum(axis=-1, keepdims=True)
    std = np.sqrt(sq / np.maximum(n - 1, 1))
    adv = _advantage_from_stats(g0, mean, n, std, estimator)
    return np.where(alive, adv, 0.0)


def _advantage_from_stats(g, mean, n, std, estimator: str) -> np.ndarray:
    """The one estimator formula, elementwise, given each row's group mean, size and sample std."""
    centred = g - mean
    if estimator == "grpo":
        return centred
    if estimator == "grpo_std":
        return centred / (std + STD_EPS)
    if estimator == "grpo_rescaled":  # TRLOO's scale, GRPO's lone-sample zero
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 1, n / (n - 1.0) * centred, 0.0).astype(float)
    # trloo / rloo: G_i - mean_{j != i} G_j = N/(N-1) (G_i - mean G); no baseline for a group of one.
    with np.errstate(divide="ignore", invalid="ignore"):
        loo = n / (n - 1.0) * centred
    return np.where(n > 1, loo, g).astype(float)


def _returns(r, traj, t, gamma: float) -> np.ndarray:
    """Reward-to-go on validated arrays; ``traj`` is a dense trajectory code."""
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma={gamma}: must be in [0, 1] (1 = paper, 0 = per-turn reward only)")
    order, same_traj_next = _trajectory_order(traj, t)
    r_s, t_s = r[order], t[order]
    # Sweep rows by their distance from the end of their trajectory, so G[k+1] is ready before G[k]; the
    # loop runs once per turn (<= T), not once per row.
    rank_from_end = _rank_from_end(same_traj_next)
    g_s = r_s.copy()
    for rank in range(1, int(rank_from_end.max(initial=0)) + 1):
        k = np.flatnonzero(rank_from_end == rank)
        g_s[k] += gamma ** (t_s[k + 1] - t_s[k]).astype(float) * g_s[k + 1]
    out = np.empty_like(g_s)
    out[order] = g_s
    return out


def _trajectory_order(traj, t) -> tuple[np.ndarray, np.ndarray]:
    """Rows sorted by trajectory then turn, and for each sorted row whether the next continues its trajectory.

    Raises ValueError when two rows share (trajectory, turn).
    """
    order = np.lexsort((t, traj))
    traj_s, t_s = traj[order], t[order]
    same_traj_next = np.zeros(len(traj), dtype=bool)  # sorted row k+1 continues row k's trajectory
    same_traj_next[:-1] = traj_s[1:] == traj_s[:-1]
    if np.any(same_traj_next[:-1] & (t_s[1:] == t_s[:-1])):
        raise ValueError(
            "two rows share (prompt_id, traj_id, turn): each turn of a trajectory must appear once"
        )
    return order, same_traj_next


def _group_stats(score, group, counted):
    """Per-group mean, member count and sample std (ddof=1; 0 for a group of one) over counted rows."""
    k = int(group.max(initial=-1)) + 1
    w = counted.astype(float)
    n = np.bincount(group, weights=w, minlength=k)
    mean = np.bincount(group, weights=w * score, minlength=k) / np.maximum(n, 1)
    sq = np.bincount(group, weights=w * (score - mean[group]) ** 2, minlength=k)
    std = np.sqrt(sq / np.maximum(n - 1, 1))
    return mean, n, std


def _validate(rewards, prompt_id, traj_id, turn):
    """Check shapes and values; return (rewards, prompt codes, trajectory codes, turns) as arrays."""
    r = np.asarray(rewards, dtype=float)
    arrays = [np.asarray(a) for a in (prompt_id, traj_id, turn)]
    if r.ndim != 1 or any(a.shape != r.shape for a in arrays):
        shapes = [r.shape] + [a.shape for a in arrays]
        raise ValueError(f"rewards, prompt_id, traj_id, turn must be 1-D of one length; got shapes {shapes}")
    if not np.all(np.isfinite(r)):
        raise ValueError(
            "rewards contain NaN or inf: every turn needs a finite reward (a failed turn scores 0, "
            "see drk.rl.turn_reward)"
        )
    t = arrays[2]
    if r.size and not np.issubdtype(t.dtype, np.integer):
        if not np.all(np.equal(np.mod(t.astype(float), 1), 0)):
            raise ValueError(f"turn must hold integers; got dtype {t.dtype}")
    prompt = np.unique(arrays[0], return_inverse=True)[1].reshape(-1)
    traj = _factorize_pairs(prompt, np.unique(arrays[1], return_inverse=True)[1].reshape(-1))
    return r, prompt, traj, t.astype(np.int64)


def _factorize_pairs(a, b) -> np.ndarray:
    """Dense integer code for each distinct (a, b) pair of non-negative integer codes."""
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    pairs = np.stack([a, b], axis=1)
    return np.unique(pairs, axis=0, return_inverse=True)[1].reshape(-1)


def _rank_from_end(same_next: np.ndarray) -> np.ndarray:
    """For rows sorted in runs, how many rows of the same run follow each row."""
    n = len(same_next)
    is_last = ~same_next
    run_end = np.flatnonzero(is_last)  # sorted index of each run's last row
    run_of_row = np.searchsorted(run_end, np.arange(n))  # first run end at or after the row
    return run_end[run_of_row] - np.arange(n)


def _first_turn_rows(traj, t) -> np.ndarray:
    """Row index of the first (lowest) turn of each row's trajectory."""
    order = np.lexsort((t, traj))
    traj_s = traj[order]
    starts = np.flatnonzero(np.r_[True, traj_s[1:] != traj_s[:-1]]) if len(traj) else np.zeros(0, int)
    first_of_traj = np.zeros(int(traj.max(initial=-1)) + 1, dtype=np.int64)
    first_of_traj[traj_s[starts]] = order[starts]
    return first_of_traj[traj]


def _as_keep(keep, n: int) -> np.ndarray:
    """Validate an optional boolean keep mask (None means every row takes gradient)."""
    if keep is None:
        return np.ones(n, dtype=bool)
    m = np.asarray(keep)
    if m.shape != (n,) or not (m.dtype == bool or np.isin(m, [0, 1]).all()):
        raise ValueError(f"keep must be a bool array of shape ({n},) with True = takes gradient; got {m.shape}")
    return m.astype(bool)
