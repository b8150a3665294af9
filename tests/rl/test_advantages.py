"""Returns and advantage estimators: hand-computed cases, edge cases, and hypothesis invariants."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drk.rl import ESTIMATORS, compute_advantages, dense_advantages, turn_returns


def one_group(rewards, **kwargs):
    n = len(rewards)
    return compute_advantages(rewards, [0] * n, list(range(n)), [0] * n, **kwargs)


# ---------------------------------------------------------------- hand-computed cases


def test_single_group_hand_case():
    r = [1.0, 0.0, 0.0, 1.0]
    np.testing.assert_allclose(one_group(r, estimator="grpo"), [0.5, -0.5, -0.5, 0.5])
    np.testing.assert_allclose(one_group(r, estimator="trloo"), [2 / 3, -2 / 3, -2 / 3, 2 / 3])
    np.testing.assert_allclose(one_group(r, estimator="rloo"), [2 / 3, -2 / 3, -2 / 3, 2 / 3])
    # sample std (ddof=1) of [1, 0, 0, 1] is sqrt(1/3)
    np.testing.assert_allclose(
        one_group(r, estimator="grpo_std"), np.array([1, -1, -1, 1]) * 0.5 / (3**-0.5 + 1e-4)
    )


def test_default_estimator_is_trloo():
    np.testing.assert_allclose(one_group([3.0, 1.0]), [2.0, -2.0])


def test_lone_success_grpo_penalises_less_than_trloo():
    # 1 success among 4: GRPO gives it 0.75, TRLOO the full 1 (mean of the others is 0)
    np.testing.assert_allclose(one_group([1.0, 0, 0, 0], estimator="grpo"), [0.75, -0.25, -0.25, -0.25])
    np.testing.assert_allclose(one_group([1.0, 0, 0, 0], estimator="trloo"), [1.0, -1 / 3, -1 / 3, -1 / 3])


def test_turn_returns_gamma_and_turn_numbering():
    # prompt 0: turns 1, 2, 3 with rewards 2, 3, 1 (rows shuffled); prompt 1: turns 1, 2 with rewards 5, 4
    r, p, tr, t = [1, 2, 3, 4, 5], [0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [3, 1, 2, 2, 1]
    np.testing.assert_allclose(turn_returns(r, p, tr, t, gamma=0.5), [1, 2 + 0.5 * 3.5, 3.5, 4, 7])
    np.testing.assert_allclose(turn_returns(r, p, tr, t, gamma=1.0), [1, 6, 4, 4, 9])
    np.testing.assert_allclose(turn_returns(r, p, tr, t, gamma=0.0), r)
    # 0-based turns give the same returns
    np.testing.assert_allclose(turn_returns(r, p, tr, np.array(t) - 1, gamma=0.5), [1, 3.75, 3.5, 4, 7])


def test_turn_gap_discounts_by_index_difference():
    # turns 1 and 3 of one trajectory (turn 2 missing): G_1 = 1 + 0.5**2 * 4
    np.testing.assert_allclose(turn_returns([1.0, 4.0], [0, 0], [0, 0], [1, 3], gamma=0.5), [2.0, 4.0])


def test_multi_turn_groups_shrink_by_turn():
    # Three trajectories of one prompt; trajectory 2 stops after turn 1.
    #   traj 0: R = 1, 1, 0   -> G = 2, 1, 0
    #   traj 1: R = 0, 0, 1   -> G = 1, 1, 1
    #   traj 2: R = 0         -> G = 0
    r = [1, 1, 0, 0, 0, 1, 0]
    traj = [0, 0, 0, 1, 1, 1, 2]
    t = [1, 2, 3, 1, 2, 3, 1]
    p = [0] * 7
    # turn 1 group {2, 1, 0}: mean 1; turn 2 {1, 1}: mean 1; turn 3 {0, 1}: mean 0.5
    np.testing.assert_allclose(
        compute_advantages(r, p, traj, t, estimator="grpo"), [1, 0, -0.5, 0, 0, 0.5, -1]
    )
    np.testing.assert_allclose(
        compute_advantages(r, p, traj, t, estimator="trloo"), [1.5, 0, -1, 0, 0, 1, -1.5]
    )
    # gamma = 0: G = R; turn 1 {1, 0, 0}, turn 2 {1, 0}, turn 3 {0, 1}
    np.testing.assert_allclose(
        compute_advantages(r, p, traj, t, estimator="trloo", gamma=0.0), [1, 1, -1, -0.5, -1, 1, -0.5]
    )


def test_group_of_one():
    # N = 1: TRLOO has no baseline (A = G), GRPO's lone sample is its own mean (A = 0)
    assert one_group([0.7], estimator="trloo")[0] == pytest.approx(0.7)
    assert one_group([0.7], estimator="rloo")[0] == pytest.approx(0.7)
    assert one_group([0.7], estimator="grpo")[0] == 0.0
    assert one_group([0.7], estimator="grpo_std")[0] == 0.0


def test_identical_returns_give_zero_even_with_std():
    np.testing.assert_array_equal(one_group([1.0, 1.0, 1.0], estimator="grpo_std"), [0, 0, 0])


def test_groups_are_per_prompt_and_string_ids_work():
    r = [1.0, 0.0, 5.0, 3.0]
    p = ["b", "b", "a", "a"]
    tr = ["x", "y", "x", "y"]
    np.testing.assert_allclose(compute_advantages(r, p, tr, [1] * 4), [1, -1, 2, -2])


def test_keep_zeroes_rows_but_keeps_baseline():
    r = [1.0, 0.0, 0.0, 1.0]
    out = one_group(r, estimator="trloo", keep=[False, True, True, True])
    np.testing.assert_allclose(out, [0, -2 / 3, -2 / 3, 2 / 3])
    out = one_group(r, estimator="grpo", keep=np.array([1, 1, 0, 1]))
    np.testing.assert_allclose(out, [0.5, -0.5, 0, 0.5])


def test_trajectory_level():
    # trajectory returns 1, 2, 3 (the first-turn return); every turn of a trajectory shares its advantage
    r, traj, t = [1, 0, 2, 0, 3], [0, 0, 1, 1, 2], [0, 1, 0, 1, 0]
    out = compute_advantages(r, [0] * 5, traj, t, estimator="grpo", level="trajectory")
    np.testing.assert_allclose(out, [-1, -1, 0, 0, 1])
    out = compute_advantages(r, [0] * 5, traj, t, estimator="trloo", level="trajectory")
    np.testing.assert_allclose(out, [-1.5, -1.5, 0, 0, 1.5])
    # single-turn data: trajectory level equals turn level
    one = compute_advantages([1, 0, 3], [0, 0, 0], [0, 1, 2], [0, 0, 0], level="trajectory")
    np.testing.assert_allclose(one, compute_advantages([1, 0, 3], [0, 0, 0], [0, 1, 2], [0, 0, 0]))


def test_empty_input():
    assert compute_advantages([], [], [], []).shape == (0,)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(rewards=[1.0, np.nan]), "NaN"),
        (dict(turn=[0, 0], traj_id=[0, 0]), "share"),
        (dict(estimator="ppo"), "trloo"),
        (dict(level="episode"), "trajectory"),
        (dict(gamma=1.5), "gamma"),
        (dict(keep=[True]), "keep"),
        (dict(prompt_id=[0]), "1-D of one length"),
        (dict(turn=[0.5, 1.0]), "integers"),
    ],
)
def test_errors_say_what_is_wrong(kwargs, match):
    args = dict(rewards=[1.0, 0.0], prompt_id=[0, 0], traj_id=[0, 1], turn=[0, 0]) | kwargs
    with pytest.raises(ValueError, match=match):
        compute_advantages(**args)


def test_dense_matches_flat():
    rng = np.random.default_rng(0)
    g = rng.normal(size=(5, 6))
    alive = rng.random((5, 6)) < 0.7
    rows, cols = np.nonzero(alive)
    for est in ESTIMATORS:
        flat = compute_advantages(g[rows, cols], rows, cols, np.zeros_like(rows), estimator=est, gamma=0.0)
        dense = dense_advantages(g, alive, estimator=est)
        np.testing.assert_allclose(dense[rows, cols], flat)
        assert np.all(dense[~alive] == 0)


# ---------------------------------------------------------------- hypothesis invariants


@st.composite
def batches(draw):
    """A random multi-turn batch: prompts x trajectories with random lengths, rewards in [-2, 3]."""
    n_prompts = draw(st.integers(1, 3))
    rows = []
    for p in range(n_prompts):
        for tr in range(draw(st.integers(1, 5))):
            for t in range(draw(st.integers(1, 3))):
                rows.append((p, tr, t))
    rewards = draw(st.lists(st.floats(-2, 3, allow_nan=False), min_size=len(rows), max_size=len(rows)))
    mask = draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    gamma = draw(st.sampled_from([0.0, 0.5, 1.0]))
    p, tr, t = (np.array(c) for c in zip(*rows, strict=True))
    return np.array(rewards), p, tr, t, np.array(mask), gamma


def group_ids(p, t):
    return [(a, b) for a, b in zip(p, t, strict=True)]


@settings(max_examples=60, deadline=None)
@given(batches())
def test_trloo_is_scaled_grpo(batch):
    r, p, tr, t, _, gamma = batch
    grpo = compute_advantages(r, p, tr, t, estimator="grpo", gamma=gamma)
    trloo = compute_advantages(r, p, tr, t, estimator="trloo", gamma=gamma)
    g = turn_returns(r, p, tr, t, gamma=gamma)
    keys = group_ids(p, t)
    sizes = np.array([keys.count(k) for k in keys])
    expected = np.where(sizes > 1, sizes / np.maximum(sizes - 1, 1) * grpo, g)
    np.testing.assert_allclose(trloo, expected, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(batches(), st.sampled_from(ESTIMATORS))
def test_advantages_sum_to_zero_per_group(batch, estimator):
    r, p, tr, t, _, gamma = batch
    adv = compute_advantages(r, p, tr, t, estimator=estimator, gamma=gamma)
    keys = group_ids(p, t)
    for k in set(keys):
        members = np.array([key == k for key in keys])
        if members.sum() > 1 or estimator.startswith("grpo"):
            assert abs(adv[members].sum()) < 1e-6


@settings(max_examples=60, deadline=None)
@given(batches(), st.sampled_from(ESTIMATORS), st.sampled_from(["turn", "trajectory"]))
def test_rejection_never_changes_baselines(batch, estimator, level):
    r, p, tr, t, mask, gamma = batch  # mask: the rejected rows
    full = compute_advantages(r, p, tr, t, estimator=estimator, gamma=gamma, level=level)
    masked = compute_advantages(r, p, tr, t, estimator=estimator, gamma=gamma, level=level, keep=~mask)
    np.testing.assert_array_equal(masked[mask], 0.0)
    np.testing.assert_allclose(masked[~mask], full[~mask])


@settings(max_examples=60, deadline=None)
@given(batches(), st.sampled_from(ESTIMATORS), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(batch, estimator, rnd):
    r, p, tr, t, mask, gamma = batch
    perm = np.arange(len(r))
    rnd.shuffle(perm)
    base = compute_advantages(r, p, tr, t, estimator=estimator, gamma=gamma, keep=~mask)
    shuf = compute_advantages(
        r[perm], p[perm], tr[perm], t[perm], estimator=estimator, gamma=gamma, keep=~mask[perm]
    )
    np.testing.assert_allclose(shuf, base[perm], atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(batches())
def test_undiscounted_returns_are_reverse_cumsums(batch):
    r, p, tr, t, _, _ = batch
    g = turn_returns(r, p, tr, t, gamma=1.0)
    for i in range(len(r)):
        later = (p == p[i]) & (tr == tr[i]) & (t >= t[i])
        assert g[i] == pytest.approx(r[later].sum(), abs=1e-9)
