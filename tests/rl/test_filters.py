"""The authors' loss filters (flat groups, failures after a success): hand cases, edges, hypothesis invariants.

Both return keep masks (True = takes gradient); the hand cases below list the rows each *drops*.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drk.rl import ESTIMATORS, after_success_keep_mask, compute_advantages, flat_group_keep_mask
from tests.rl.test_advantages import batches


def dropped_flat(*args, **kwargs):
    """The rows :func:`flat_group_keep_mask` drops."""
    return ~flat_group_keep_mask(*args, **kwargs)


def dropped_after(*args):
    """The rows :func:`after_success_keep_mask` drops."""
    return ~after_success_keep_mask(*args)


# ---------------------------------------------------------------- flat_group_keep_mask: hand-computed cases


def test_flat_group_uses_each_trajectorys_own_last_turn():
    # prompt 0: traj 0 R = 0, 1 (last 1); traj 1 R = 1 (ended after turn 1, last 1) -> flat, although turn 1
    #           rewards differ (0 vs 1)
    # prompt 1: traj 0 R = 1, 0 (last 0); traj 1 R = 0, 1 (last 1)                  -> std 0.5, kept
    # prompt 2: one trajectory                                                       -> std 0, flagged
    r = [0, 1, 1, 1, 0, 0, 1, 0.7]
    p = [0, 0, 0, 1, 1, 1, 1, 2]
    tr = [0, 0, 1, 0, 0, 1, 1, 0]
    t = [1, 2, 1, 1, 2, 1, 2, 1]
    np.testing.assert_array_equal(dropped_flat(r, p, tr, t), [1, 1, 1, 0, 0, 0, 0, 1])


def test_flat_group_threshold():
    last = [0.5, 0.5 + 2e-3]  # population std 1e-3: not below 1e-3
    assert not dropped_flat(last, [0, 0], [0, 1], [1, 1]).any()
    assert dropped_flat(last, [0, 0], [0, 1], [1, 1], min_std=1.1e-3).all()
    assert dropped_flat([0.5, 0.5 + 1e-4], [0, 0], [0, 1], [1, 1]).all()
    # identical non-zero rewards that are not exactly representable still count as flat
    assert dropped_flat([0.1 * 3] * 16, [0] * 16, range(16), [1] * 16).all()


def test_flat_group_drop_equals_removing_the_prompt():
    # flagged rows keep their place in the baselines, but groups never span prompts: the kept rows get the
    # advantages they would get if the flat prompt were not in the batch at all
    r = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 2.0])  # last-turn rewards: prompt 0: 0, 1; prompt 1: 2, 2
    p = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    tr = np.array([0, 0, 1, 1, 0, 0, 1, 1])
    t = np.array([1, 2, 1, 2, 1, 2, 1, 2])
    flat = dropped_flat(r, p, tr, t)
    np.testing.assert_array_equal(flat, [0, 0, 0, 0, 1, 1, 1, 1])
    adv = compute_advantages(r, p, tr, t, keep=~flat)
    alone = compute_advantages(r[:4], p[:4], tr[:4], t[:4])
    assert np.abs(alone).max() > 0
    np.testing.assert_allclose(adv, np.r_[alone, np.zeros(4)])


# ---------------------------------------------------------------- after_success_keep_mask: hand-computed cases


def test_after_success_hand_cases():
    rows = [  # (traj, turn, reward, expected)
        (0, 1, 0.0, False), (0, 2, 1.0, False), (0, 3, 0.0, True), (0, 4, 0.0, True),  # success, then 2 fails
        (1, 1, 1.5, False), (1, 2, 0.0, True), (1, 3, 1.0, False),  # a later success is kept
        (2, 1, 0.0, False), (2, 2, 0.0, False),  # never succeeded
        (3, 1, 2.0, False), (3, 5, -1.0, True), (3, 9, 0.0, True),  # turn gaps; negative rewards fail too
        (4, 1, 1.0, False),  # a lone success
    ]
    tr, t, r, expected = (list(c) for c in zip(*rows, strict=True))
    np.testing.assert_array_equal(dropped_after(r, [7] * len(r), tr, t), expected)


def test_after_success_is_per_trajectory_and_per_prompt():
    # the same traj_id under two prompts names two trajectories: prompt "b"'s success does not reach "a"
    r, p, tr, t = [1.0, 0.0, 0.0, 0.0], ["b", "b", "a", "a"], [0, 0, 0, 0], [1, 2, 1, 2]
    np.testing.assert_array_equal(dropped_after(r, p, tr, t), [False, True, False, False])


def test_combined_mask_with_compute_advantages():
    # one prompt, traj 0: R = 1, 0 (its turn 2 is masked), traj 1: R = 0, 0; last-turn rewards 0, 0 are flat
    r, p, tr, t = [1.0, 0.0, 0.0, 0.0], [0] * 4, [0, 0, 1, 1], [1, 2, 1, 2]
    after = dropped_after(r, p, tr, t)
    np.testing.assert_array_equal(after, [False, True, False, False])
    # turn 1 group: G = 1, 0 -> TRLOO +1, -1; the masked turn-2 row still counts in its group's baseline
    np.testing.assert_allclose(compute_advantages(r, p, tr, t, keep=~after), [1, 0, -1, 0])
    assert dropped_flat(r, p, tr, t).all()


# ---------------------------------------------------------------- edges and errors


@pytest.mark.parametrize("fn", [flat_group_keep_mask, after_success_keep_mask])
def test_empty_input(fn):
    out = fn([], [], [], [])
    assert out.shape == (0,) and out.dtype == bool


@pytest.mark.parametrize("fn", [flat_group_keep_mask, after_success_keep_mask])
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(rewards=[1.0, np.nan]), "NaN"),
        (dict(turn=[0, 0], traj_id=[0, 0]), "share"),
        (dict(prompt_id=[0]), "1-D of one length"),
    ],
)
def test_errors_say_what_is_wrong(fn, kwargs, match):
    args = dict(rewards=[1.0, 0.0], prompt_id=[0, 0], traj_id=[0, 1], turn=[0, 0]) | kwargs
    with pytest.raises(ValueError, match=match):
        fn(**args)


@pytest.mark.parametrize("min_std", [0.0, -1.0, np.nan, np.inf])
def test_min_std_must_be_positive(min_std):
    with pytest.raises(ValueError, match="min_std"):
        flat_group_keep_mask([1.0], [0], [0], [0], min_std=min_std)


# ---------------------------------------------------------------- hypothesis invariants


def reference_flat(r, p, tr, t, min_std=1e-3):
    """Direct transcription: per prompt, the std of each trajectory's final-turn reward."""
    out = np.zeros(len(r), bool)
    for prompt in set(p.tolist()):
        last = [r[(p == prompt) & (tr == j)][np.argmax(t[(p == prompt) & (tr == j)])]
                for j in set(tr[p == prompt].tolist())]
        out[p == prompt] = np.std(last) < min_std
    return out


def reference_after(r, p, tr, t):
    """Direct transcription: reward <= 0 and some earlier turn of the same trajectory has reward > 0."""
    same = (p[:, None] == p[None, :]) & (tr[:, None] == tr[None, :])
    earlier_success = (same & (t[None, :] < t[:, None]) & (r[None, :] > 0)).any(axis=1)
    return earlier_success & (r <= 0)


@settings(max_examples=60, deadline=None)
@given(batches())
def test_masks_match_their_definitions(batch):
    r, p, tr, t, _, _ = batch
    r = np.round(r)  # ties are common, so flat prompts occur
    np.testing.assert_array_equal(dropped_flat(r, p, tr, t), reference_flat(r, p, tr, t))
    np.testing.assert_array_equal(dropped_after(r, p, tr, t), reference_after(r, p, tr, t))


@settings(max_examples=60, deadline=None)
@given(batches(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(batch, rnd):
    r, p, tr, t, _, _ = batch
    r = np.round(r)
    perm = np.arange(len(r))
    rnd.shuffle(perm)
    for fn in (flat_group_keep_mask, after_success_keep_mask):
        np.testing.assert_array_equal(fn(r[perm], p[perm], tr[perm], t[perm]), fn(r, p, tr, t)[perm])


@settings(max_examples=60, deadline=None)
@given(batches(), st.sampled_from(ESTIMATORS))
def test_combined_mask_zeroes_exactly_the_flagged_rows(batch, estimator):
    r, p, tr, t, mask, gamma = batch
    r = np.round(r)
    keep = ~mask & flat_group_keep_mask(r, p, tr, t) & after_success_keep_mask(r, p, tr, t)
    reject = ~keep
    full = compute_advantages(r, p, tr, t, estimator=estimator, gamma=gamma)
    out = compute_advantages(r, p, tr, t, estimator=estimator, gamma=gamma, keep=keep)
    np.testing.assert_array_equal(out[reject], 0.0)
    np.testing.assert_allclose(out[~reject], full[~reject])


@settings(max_examples=60, deadline=None)
@given(batches(), st.sampled_from(ESTIMATORS), st.sampled_from(["turn", "trajectory"]))
def test_dropping_flat_groups_equals_removing_them(batch, estimator, level):
    r, p, tr, t, _, gamma = batch
    r = np.round(r)
    flat = dropped_flat(r, p, tr, t)
    kw = dict(estimator=estimator, gamma=gamma, level=level)
    out = compute_advantages(r, p, tr, t, keep=~flat, **kw)
    kept = ~flat
    np.testing.assert_allclose(out[kept], compute_advantages(r[kept], p[kept], tr[kept], t[kept], **kw))
