"""Two loss filters from the authors' released code, beyond the paper's equations (off by default in drk.train).

PAPER.md: "groups whose last-turn rewards have std < 1e-3 are dropped; once a turn had reward > 0, later
failing turns leave the loss." Neither appears in the paper's equations, so ``RLConfig`` keeps both off and
runs the method as written; switch them on (``drop_flat_groups``, ``mask_failures_after_success``) to compare
with the authors' release.

Both functions return *keep* masks (True = the row takes gradient), the convention of PRS/MRS and of
``compute_advantages(keep=...)``: combine them as ``keep = keep_prs & keep_mrs & flat & after``. Like PRS/MRS
rejections, the rows they drop only lose their own gradient; rewards, returns and baselines are unchanged. Rows are
addressed by explicit ``(prompt_id, traj_id, turn)`` ids, in any order, exactly as in
:func:`drk.rl.compute_advantages`.

- :func:`flat_group_keep_mask`: a prompt whose trajectories all *end* with the same reward (everyone solved it
  equally, or nobody did) is dropped from the loss as a whole.
- :func:`after_success_keep_mask`: once a trajectory has had a turn with reward > 0, its later turns with
  reward <= 0 (e.g. a failed attempt to speed up a working kernel) take no gradient.
"""

from __future__ import annotations

import numpy as np

from drk.rl.advantages import _trajectory_order, _validate

#: The authors' threshold on the std of a prompt's last-turn rewards.
FLAT_GROUP_MIN_STD = 1e-3


def flat_group_keep_mask(rewards, prompt_id, traj_id, turn, *, min_std: float = FLAT_GROUP_MIN_STD) -> np.ndarray:
    """Keep mask that drops every row of a prompt whose trajectories' last-turn rewards are (nearly) all equal.

    For each prompt, take each trajectory's reward at its own final turn (the highest turn index of that
    trajectory, so an episode that ended early contributes its last played turn) and their population std
    (ddof=0). If it is below ``min_std`` every row of the prompt, at every turn, is dropped (False).

    Baselines: groups are (prompt, turn) or prompt, never wider than one prompt, so when a prompt is dropped
    all members of its groups are dropped too. Keeping the dropped rows "in the baselines", as
    ``compute_advantages(keep=...)`` does, therefore changes no kept row: the effect is exactly that of
    removing the prompt's samples from the loss (and from the loss's token normaliser).

    Args:
        rewards: shape (n,), finite float reward of each turn.
        prompt_id: shape (n,), hashable prompt id of each row.
        traj_id: shape (n,), trajectory id within the prompt.
        turn: shape (n,), integer turn index.
        min_std: > 0; the authors use 1e-3.

    Returns:
        shape (n,) bool, False for rows of flat prompts, in the input row order. A prompt with a single
        trajectory has std 0 and is dropped (there is nothing to compare it with); an empty input gives an
        empty mask.

    Raises:
        ValueError: ``min_std`` not finite and > 0, bad shapes, non-finite rewards, duplicate rows.
    """
    if not (np.isfinite(min_std) and min_std > 0):
        raise ValueError(f"min_std={min_std}: must be finite and > 0 (the authors use 1e-3)")
    r, prompt, traj, t = _validate(rewards, prompt_id, traj_id, turn)
    order, same_traj_next = _trajectory_order(traj, t)
    last = order[~same_traj_next]  # one row per trajectory: its final turn
    p_last, r_last = prompt[last], r[last]
    k = int(prompt.max(initial=-1)) + 1
    n = np.maximum(np.bincount(p_last, minlength=k), 1)  # trajectories per prompt
    mean = np.bincount(p_last, weights=r_last, minlength=k) / n
    var = np.bincount(p_last, weights=(r_last - mean[p_last]) ** 2, minlength=k) / n
    return ~(np.sqrt(var) < min_std)[prompt]


def after_success_keep_mask(rewards, prompt_id, traj_id, turn) -> np.ndarray:
    """Keep mask that drops turns with reward <= 0 following an earlier turn of the same trajectory with reward > 0.

    The earlier success need not be the turn just before (success, fail, fail drops both failures), and a
    later success is never dropped (success, fail, success drops only the middle turn). Turn indices only
    order the turns; gaps are allowed.

    Args:
        rewards: shape (n,), finite float reward of each turn.
        prompt_id: shape (n,), hashable prompt id of each row.
        traj_id: shape (n,), trajectory id within the prompt.
        turn: shape (n,), integer turn index.

    Returns:
        shape (n,) bool in the input row order, False for the dropped turns; a trajectory's first turn is never
        dropped, nor is any turn of a trajectory without a positive reward. An empty input gives an empty mask.

    Raises:
        ValueError: bad shapes, non-finite rewards, duplicate rows.
    """
    r, _, traj, t = _validate(rewards, prompt_id, traj_id, turn)
    order, same_traj_next = _trajectory_order(traj, t)
    r_s = r[order]
    pos = (r_s > 0).astype(np.int64)
    before = np.cumsum(pos) - pos  # successes at sorted rows strictly before row k, over all trajectories
    starts = np.r_[True, ~same_traj_next[:-1]] if len(r) else np.zeros(0, bool)  # first turn of a trajectory
    start_of_row = np.maximum.accumulate(np.where(starts, np.arange(len(r)), 0))
    earlier_success = before - before[start_of_row] > 0  # within the row's own trajectory
    out = np.empty(len(r), dtype=bool)
    out[order] = ~(earlier_success & (r_s <= 0))
    return out
