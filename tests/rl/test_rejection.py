"""PRS (Eq. 9) and MRS (Eq. 6): probabilities, seeded draws, windows, vetoes, diagnostics."""

import numpy as np
import pytest
import torch

from drk.rl import MRSConfig, PRSConfig, compute_advantages, mrs_mask, prs_keep_mask, prs_keep_prob

# ---------------------------------------------------------------- PRS


def test_prs_soft_probabilities_hand_case():
    correct = [True, True, True, True, False, False]
    pr = [0.30, 0.35, 0.45, 0.10, 0.0, None]
    np.testing.assert_allclose(prs_keep_prob(correct, pr), [0.0, 0.5, 1.0, 0.0, 1.0, 1.0])


def test_prs_hard_and_off():
    correct, pr = [True, True, False], [0.29, 0.3, 0.0]
    np.testing.assert_array_equal(prs_keep_prob(correct, pr, PRSConfig(mode="hard")), [0, 1, 1])
    np.testing.assert_array_equal(prs_keep_prob(correct, pr, PRSConfig(mode="off")), [1, 1, 1])
    np.testing.assert_array_equal(prs_keep_mask(correct, pr, PRSConfig(mode="hard")), [False, True, True])


@pytest.mark.parametrize("pr", [0.32, 0.35, 0.38])
def test_prs_empirical_keep_rate(pr):
    n = 20_000
    keep = prs_keep_mask(np.ones(n, bool), np.full(n, pr), rng=np.random.default_rng(1))
    expected = np.clip((pr - 0.3) / 0.1, 0, 1)
    assert abs(keep.mean() - expected) < 4 * np.sqrt(expected * (1 - expected) / n)


def test_prs_is_seeded():
    correct, pr = np.ones(200, bool), np.full(200, 0.35)
    a = prs_keep_mask(correct, pr, PRSConfig(seed=3))
    np.testing.assert_array_equal(a, prs_keep_mask(correct, pr, PRSConfig(seed=3)))
    assert not np.array_equal(a, prs_keep_mask(correct, pr, PRSConfig(seed=4)))


def test_prs_missing_coverage():
    with pytest.raises(ValueError, match="mode='off'"):
        prs_keep_prob([True], [None])
    np.testing.assert_array_equal(prs_keep_prob([True], [None], PRSConfig(on_missing="keep")), [1.0])
    np.testing.assert_array_equal(prs_keep_prob([True], [np.nan], PRSConfig(on_missing="reject")), [0.0])
    np.testing.assert_array_equal(prs_keep_prob([True], [None], PRSConfig(mode="off")), [1.0])


@pytest.mark.parametrize(
    ("kwargs", "match"), [(dict(mode="soft-ish"), "mode"), (dict(tau=1.2), "tau"), (dict(s=0), "s=")]
)
def test_prs_config_validates(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PRSConfig(**kwargs)


def test_prs_rejected_turns_keep_their_baseline():
    # the documented hand-off: PRS keep mask -> compute_advantages(keep=keep)
    rewards = np.array([2.0, 0.0, 2.5, 0.0])
    keep = prs_keep_mask([True, False, True, False], [0.1, None, 0.9, None])  # first correct turn is lazy
    np.testing.assert_array_equal(keep, [False, True, True, True])
    adv = compute_advantages(rewards, [0] * 4, [0, 1, 2, 3], [1] * 4, keep=keep)
    full = compute_advantages(rewards, [0] * 4, [0, 1, 2, 3], [1] * 4)
    np.testing.assert_allclose(adv, np.where(keep, full, 0.0))


# ---------------------------------------------------------------- MRS


def batch(n_traj=3, turns=2, length=8, seed=0):
    """Identical trainer/rollout log-probs for n_traj trajectories of `turns` turns, one row per turn."""
    rng = np.random.default_rng(seed)
    logp = np.log(rng.uniform(0.05, 1.0, size=(n_traj * turns, length)))
    traj = np.repeat(np.arange(n_traj), turns)
    return logp, logp.copy(), np.zeros_like(traj), traj


def test_mrs_no_mismatch_keeps_everything():
    lt, lr, p, tr = batch()
    keep, diag = mrs_mask(lt, lr, p, tr)
    assert keep.all()
    assert diag.masked_frac == 0 and diag.ratio_mean == pytest.approx(1.0)
    assert diag.kl_k1 == pytest.approx(0.0) and diag.kl_k3 == pytest.approx(0.0)
    assert diag.ess_frac == pytest.approx(1.0)
    assert diag.num_trajectories == 3 and diag.num_tokens == lt.size


def test_mrs_window_rejects_whole_trajectory():
    lt, lr, p, tr = batch()
    lt[tr == 1] += 0.01  # trajectory 1: w = e^0.01 = 1.01 > 1.001
    keep, diag = mrs_mask(lt, lr, p, tr)
    np.testing.assert_array_equal(keep, tr != 1)
    assert diag.traj_masked_frac == pytest.approx(1 / 3)
    assert diag.masked_frac == pytest.approx(1 / 3)
    assert diag.ratio_max == pytest.approx(np.exp(0.01))
    assert diag.veto_frac == 0


def test_mrs_window_is_over_the_whole_trajectory():
    lt, lr, p, tr = batch()
    lt[0] += 0.01  # turn 1 of trajectory 0 drifts up, turn 2 down by as much: geometric mean stays 1
    lt[1] -= 0.01
    keep, _ = mrs_mask(lt, lr, p, tr)
    assert keep.all()
    keep, _ = mrs_mask(lt, lr, p, tr, config=MRSConfig(low=0.999, high=1.0005))
    assert keep.all()


def test_mrs_token_veto_drops_only_that_turn():
    lt, lr, p, tr = batch()
    lt[2, 0] -= 10.0  # ratio e^-10 = 4.5e-5 < 1e-4 on one token of turn 1 of trajectory 1
    lt[2, 1] += 10.0  # compensated so the trajectory mean ratio stays 1
    keep, diag = mrs_mask(lt, lr, p, tr)
    np.testing.assert_array_equal(keep, [True, True, False, True, True, True])
    assert diag.veto_frac == pytest.approx(1 / 6)
    assert diag.token_log_ratio_abs_max == pytest.approx(10.0)
    keep, _ = mrs_mask(lt, lr, p, tr, config=MRSConfig(token_veto=0.0))
    assert keep.all()


def test_mrs_kl_estimates_for_constant_shift():
    lt, lr, p, tr = batch()
    delta = -0.05
    keep, diag = mrs_mask(lt + delta, lr, p, tr, config=MRSConfig(enabled=False))
    assert keep.all()  # disabled: keep everything but still report
    assert diag.masked_frac == 1.0
    assert diag.kl_k1 == pytest.approx(-delta)
    assert diag.kl_k3 == pytest.approx(np.exp(delta) - 1 - delta)


def test_mrs_ragged_and_token_mask_agree_with_padded():
    lt, lr, p, tr = batch()
    lt[3] += 0.02  # trajectory 1 drifts
    lengths = [8, 5, 3, 8, 6, 2]
    mask = np.arange(8)[None, :] < np.array(lengths)[:, None]
    lt_pad = np.where(mask, lt, 123.0)  # garbage in the padding must be ignored
    keep_pad, diag_pad = mrs_mask(lt_pad, lr, p, tr, token_mask=mask)
    keep_rag, diag_rag = mrs_mask(
        [lt[i, :n] for i, n in enumerate(lengths)], [lr[i, :n] for i, n in enumerate(lengths)], p, tr
    )
    np.testing.assert_array_equal(keep_pad, keep_rag)
    assert diag_pad.to_dict() == pytest.approx(diag_rag.to_dict())
    assert diag_pad.num_tokens == sum(lengths)
    # trajectory 1 has 3 + 8 valid tokens, 8 of them shifted by 0.02
    assert diag_pad.ratio_max == pytest.approx(np.exp(0.02 * 8 / 11))


def test_mrs_accepts_torch_bf16():
    lt, lr, p, tr = batch()
    keep, diag = mrs_mask(
        torch.tensor(lt, dtype=torch.bfloat16), torch.tensor(lt, dtype=torch.bfloat16), p, tr
    )
    assert keep.all() and diag.num_tokens == lt.size


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [(dict(low=1.01), "window"), (dict(high=0.9), "window"), (dict(token_veto=1.0), "veto")],
)
def test_mrs_config_validates(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MRSConfig(**kwargs)


def test_mrs_shape_errors():
    lt, lr, p, tr = batch()
    with pytest.raises(ValueError, match="one shape"):
        mrs_mask(lt, lr[:, :4], p, tr)
    with pytest.raises(ValueError, match="one entry per row"):
        mrs_mask(lt, lr, p[:2], tr[:2])
