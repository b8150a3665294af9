"""The self-inclusion bias study: Monte-Carlo shrink factors vs 1 - 1/N, per-turn shrink, the toy bandit."""

import json

import numpy as np
import pytest

from drk.rl import compute_advantages
from drk.rl.bias import (
    BanditConfig,
    final_rewards,
    paired_difference,
    per_turn_shrink,
    per_turn_shrink_analytic,
    run_bandit,
    save_table,
    shrink_factors,
    simulate_groups,
    summarize_curves,
    turn_advantages,
)


@pytest.fixture(scope="module")
def shrink_all():
    return shrink_factors(range(2, 33), n_groups=20_000, confidence=0.999)


def test_paper_group_sizes_match_one_minus_one_over_n_within_ci():
    df = shrink_factors((2, 4, 8, 16), n_groups=20_000).set_index(["estimator", "N"])
    for n in (2, 4, 8, 16):
        for est, analytic in (("grpo", 1 - 1 / n), ("trloo", 1.0)):
            row = df.loc[(est, n)]
            assert row["shrink_analytic"] == pytest.approx(analytic)
            assert row["ci_lo"] <= analytic <= row["ci_hi"], (est, n, row.to_dict())


def test_all_group_sizes_within_wide_ci_and_grpo_is_biased(shrink_all):
    inside = (shrink_all["ci_lo"] <= shrink_all["shrink_analytic"]) & (
        shrink_all["shrink_analytic"] <= shrink_all["ci_hi"]
    )
    assert inside.all(), shrink_all[~inside]
    grpo = shrink_all[shrink_all["estimator"] == "grpo"].set_index("N")
    # GRPO's interval excludes 1 (the unbiased value) for every N up to 16
    assert (grpo.loc[2:16, "ci_hi"] < 1.0).all()


def test_mc_ratio_grpo_over_trloo_is_exact():
    # A_grpo = (N-1)/N * A_trloo sample by sample, so the MC estimates are exactly proportional
    df = shrink_factors((3, 5), n_groups=2_000).set_index(["N", "estimator"])["shrink_mc"]
    for n in (3, 5):
        assert df[(n, "grpo")] == pytest.approx((1 - 1 / n) * df[(n, "trloo")])


def test_per_turn_shrink_analytic_hand_values():
    # K = 4, q = 0.5: turn 3 has E[N] = 1 and P(N >= 1) = 1 - 0.75**4
    np.testing.assert_allclose(
        per_turn_shrink_analytic(4, 0.5, 3), [0.75, 1 - (1 - 0.5**4) / 2, 1 - (1 - 0.75**4)]
    )
    np.testing.assert_allclose(per_turn_shrink_analytic(8, 0.0, 3), [7 / 8] * 3)


def test_per_turn_shrink_mc_matches_analytic():
    df = per_turn_shrink(rollouts=(4,), stop_probs=(0.5,), n_groups=20_000, confidence=0.999)
    assert ((df["ci_lo"] <= df["shrink_analytic"]) & (df["shrink_analytic"] <= df["ci_hi"])).all(), df
    grpo = df[df["estimator"] == "grpo"].sort_values("turn")
    assert np.all(np.diff(grpo["shrink_analytic"]) < 0)  # later, thinner groups are shrunk more
    assert grpo["weight_vs_turn1"].iloc[0] == 1.0


def test_simulated_groups_use_the_shared_estimators():
    cfg = BanditConfig(rollouts=5, turns=3, stop_prob=0.3)
    groups = simulate_groups(np.random.default_rng(0), 2, cfg, 0.0)
    m, k, t = np.nonzero(groups["alive"])
    rewards = groups["reward"][m, k, t]
    assert np.all(groups["reward"][~groups["alive"]] == 0)
    for est in ("grpo", "trloo"):
        flat = compute_advantages(rewards, m, k, t, estimator=est)
        np.testing.assert_allclose(turn_advantages(groups, est)[m, k, t], flat)


@pytest.fixture(scope="module")
def bandit():
    return run_bandit(BanditConfig(steps=150), n_runs=40, seed=0)


def test_bandit_learns_and_trloo_is_faster_early(bandit):
    start = bandit[bandit["step"] == 0]["expected_reward"]
    assert start.mean() == pytest.approx(0.4 * (1 + 0.9 + 0.81) / (1 + np.exp(2)))
    end = bandit[bandit["step"] == 149].groupby("estimator")["expected_reward"].mean()
    assert (end > 0.8).all()
    diff = paired_difference(bandit, "trloo", "grpo", last=100)
    assert diff["ci_lo"] > 0, diff  # the unbiased gradient climbs faster


def test_bandit_is_seeded_and_tidy(bandit):
    again = run_bandit(BanditConfig(steps=150), n_runs=40, seed=0)
    assert again.equals(bandit)
    assert set(bandit.columns) == {"estimator", "run", "step", "reward", "expected_reward", "p_good"}
    assert len(bandit) == 2 * 40 * 150


def test_bandit_summaries(bandit):
    curves = summarize_curves(bandit, "reward", smooth=10)
    assert len(curves) == 2 * 150 and (curves["ci_lo"] <= curves["mean"]).all()
    final = final_rewards(bandit, last=20).set_index("estimator")
    assert set(final.index) == {"grpo", "trloo"}
    assert (final["final_expected_reward"] <= BanditConfig().optimal_reward).all()
    assert BanditConfig().optimal_reward == pytest.approx(0.4 * 2.71)


def test_bandit_config_validates():
    with pytest.raises(ValueError, match="stop_prob"):
        BanditConfig(stop_prob=1.0)
    with pytest.raises(ValueError, match="estimator"):
        run_bandit(BanditConfig(steps=2), estimators=("ppo",), n_runs=2)


def test_save_table_writes_config(tmp_path):
    df = shrink_factors((2,), n_groups=100)
    csv, meta = save_table(df, tmp_path, "shrink", {"n_groups": 100})
    assert csv.read_text().startswith("estimator,N")
    assert json.loads(meta.read_text())["config"] == {"n_groups": 100}
