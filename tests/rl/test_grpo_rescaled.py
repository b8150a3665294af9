"""``grpo_rescaled``: GRPO's advantage times N/(N-1) per group, 0 for a group of one (issue 12, item 6's ablation)."""

import numpy as np

from drk.rl import ESTIMATORS, compute_advantages, dense_advantages


def test_grpo_rescaled_is_grpo_times_n_over_n_minus_1_and_zero_alone():
    # prompt 0: three rollouts at turn 1, two at turn 2, one at turn 3 (episodes ended early); prompt 1: one
    rewards = np.array([0.0, 1.0, 2.0, 3.0, 1.0, 2.0, 5.0])
    prompt = np.array([0, 0, 0, 0, 0, 0, 1])
    traj = np.array([0, 1, 2, 1, 2, 2, 0])
    turn = np.array([1, 1, 1, 2, 2, 3, 1])
    ids = (rewards, prompt, traj, turn)
    grpo = compute_advantages(*ids, estimator="grpo", gamma=0.0)
    rescaled = compute_advantages(*ids, estimator="grpo_rescaled", gamma=0.0)
    trloo = compute_advantages(*ids, estimator="trloo", gamma=0.0)
    sizes = np.array([3, 3, 3, 2, 2, 1, 1])
    np.testing.assert_allclose(rescaled, np.where(sizes > 1, sizes / np.maximum(sizes - 1, 1) * grpo, 0.0))
    np.testing.assert_allclose(rescaled[sizes > 1], trloo[sizes > 1])  # TRLOO wherever a baseline exists
    assert rescaled[5] == 0.0 and rescaled[6] == 0.0 and trloo[6] == 5.0  # lone samples: GRPO's 0, not TRLOO's G
    assert "grpo_rescaled" in ESTIMATORS


def test_grpo_rescaled_dense_matches_flat_and_keep_mask_zeroes():
    g = np.array([[1.0, 2.0, 4.0], [3.0, 0.0, 0.0]])
    alive = np.array([[True, True, True], [True, False, False]])
    dense = dense_advantages(g, alive, estimator="grpo_rescaled")
    np.testing.assert_allclose(dense[0], 1.5 * (g[0] - g[0].mean()))
    np.testing.assert_array_equal(dense[1], [0.0, 0.0, 0.0])
    keep = np.array([True, False, True])
    adv = compute_advantages(g[0], [0, 0, 0], [0, 1, 2], [1, 1, 1], estimator="grpo_rescaled", keep=keep)
    np.testing.assert_allclose(adv, [1.5 * (1 - 7 / 3), 0.0, 1.5 * (4 - 7 / 3)])  # baseline keeps the rejected row
