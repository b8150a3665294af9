"""PLAN.md's claims table: the verdict rules on constructed intervals (every outcome), paired statistics and the
problem bootstrap on constructed runs, the cross-setting and control columns, and the CLI on a synthetic tree."""

import math

import numpy as np
import pandas as pd
import pytest

from drk.mini2.__main__ import main
from drk.mini2.claims import CLAIMS, COLUMNS, Claim, claims_table, margin_of, verdict
from drk.mini2.endpoints import Observation
from drk.mini2.stats import t_quantile

NAN = float("nan")


@pytest.mark.parametrize("direction", [">", ">="])
def test_verdict_greater(direction):
    assert verdict(0.01, 0.05, direction, 0.02) == "reproduced"
    assert verdict(0.005, 0.015, direction, 0.02) == "reproduced"  # excludes 0 on the claimed side: listed first
    assert verdict(-0.05, -0.01, direction, 0.02) == "not_reproduced"  # the other side
    assert verdict(-0.015, 0.019, direction, 0.02) == "not_reproduced"  # within the equivalence margin
    assert verdict(-0.03, 0.05, direction, 0.02) == "inconclusive"
    assert verdict(-0.015, 0.019, direction, None) == "inconclusive"  # no margin for this metric
    assert verdict(NAN, NAN, direction, 0.02) == "inconclusive"  # fewer than two seeds


def test_verdict_less_and_equivalence():
    assert verdict(-0.05, -0.01, "<", 0.02) == "reproduced"
    assert verdict(0.01, 0.05, "<", 0.02) == "not_reproduced"
    assert verdict(-0.01, 0.01, "<", 0.02) == "not_reproduced"
    assert verdict(-0.05, 0.01, "<", 0.02) == "inconclusive"
    assert verdict(-0.01, 0.015, "~", 0.02) == "reproduced"  # MRS inert: the interval within the margin
    assert verdict(0.03, 0.05, "~", 0.02) == "not_reproduced"
    assert verdict(-0.03, 0.01, "~", 0.02) == "inconclusive"
    assert verdict(-0.04, 0.04, ">", margin_of("pr_correct/turn3")) == "not_reproduced"  # PR margin 0.05
    assert margin_of("fast@1.2/turn3") == margin_of("hacked/turn1") == 0.02 and margin_of("train_reward") is None
    with pytest.raises(ValueError, match="direction"):
        verdict(0, 1, "!=", 0.02)


def const(value, problems=("a", "b")):
    """An observation equal to ``value`` on every problem (one point, 8 samples each)."""
    return Observation(value, problems, np.full((1, len(problems)), 8 * value), np.full((1, len(problems)), 8.0))


def obs_of(table):
    """{(setting, variant, seed): {"fast@1.2/turn3": const(value)}} from {(setting, variant): [values by seed]}."""
    return {(st, v, s): {"fast@1.2/turn3": const(x)} for (st, v), xs in table.items() for s, x in enumerate(xs)}


TURNS = {"T": 3, "S": 8}
TWO = (Claim("TRLOO beats GRPO", "trloo", "grpo", ">"),
       Claim("control", "single_turn", "single_turn_grpo", ">", control=True))


def test_claim_rows_paired_by_seed_with_settings_and_control():
    d = np.array([0.10, 0.12, 0.08, 0.11, 0.09])
    grpo = np.array([0.2, 0.3, 0.25, 0.1, 0.4])
    obs = obs_of({("main", "trloo"): grpo + d, ("main", "grpo"): grpo,
                  ("main", "single_turn"): [0.3, 0.3, 0.3, 0.3, 0.3],
                  ("main", "single_turn_grpo"): [0.30, 0.301, 0.299, 0.30, 0.302],
                  ("sensitivity", "trloo"): grpo - 0.01, ("sensitivity", "grpo"): grpo,
                  ("sensitivity", "single_turn"): [0.3] * 5, ("sensitivity", "single_turn_grpo"): [0.2] * 5})
    table = claims_table(obs, TURNS, TWO, n_boot=200)
    assert list(table.columns[:9]) == list(COLUMNS)
    main_row = table[(table["setting"] == "main") & (table["claim"] == "TRLOO beats GRPO")].iloc[0]
    half = t_quantile(0.975, 4) * d.std(ddof=1) / math.sqrt(5)
    assert main_row["n_seeds"] == 5 and main_row["effect"] == pytest.approx(0.10)
    assert (main_row["ci_lo"], main_row["ci_hi"]) == pytest.approx((0.10 - half, 0.10 + half))
    assert main_row["verdict"] == "reproduced"
    # the sensitivity setting flips the sign: reported as setting-dependent
    assert main_row["agrees_in_sensitivity"] == False and main_row["reported_verdict"] == "setting_dependent"  # noqa: E712
    # problem-homogeneous runs: every bootstrap resample gives the same effect
    assert (main_row["boot_lo"], main_row["boot_hi"]) == pytest.approx((0.10, 0.10))
    controls = table[table["control"]].set_index("setting")
    assert controls.loc["main", "verdict"] == "not_reproduced" and "control passes" in controls.loc["main", "note"]
    assert controls.loc["sensitivity", "verdict"] == "reproduced"
    warned = table[(table["setting"] == "sensitivity") & ~table["control"]]
    assert warned["note"].str.contains("control reproduced").all()
    assert not table[table["setting"] == "main"]["note"].str.contains("WARNING").any()


def test_few_seeds_are_inconclusive_and_bootstrap_resamples_problems():
    hetero = {("main", "trloo", s): {"fast@1.2/turn3": Observation(
        0.6, ("a", "b"), np.array([[4.0, 5.6]]), np.array([[8.0, 8.0]]))} for s in range(3)}  # a 0.5, b 0.7
    hetero |= {("main", "grpo", s): {"fast@1.2/turn3": const(0.5)} for s in range(3)}
    row = claims_table(hetero, TURNS, TWO[:1], n_boot=2000).iloc[0]
    assert row["effect"] == pytest.approx(0.1) and row["ci_lo"] == pytest.approx(0.1)  # no seed variance
    assert (row["boot_lo"], row["boot_hi"]) == pytest.approx((0.0, 0.2))  # draws aa: 0, ab: 0.1, bb: 0.2
    single = {k: v for k, v in hetero.items() if k[2] == 0}
    row = claims_table(single, TURNS, TWO[:1], n_boot=10).iloc[0]
    assert row["n_seeds"] == 1 and row["verdict"] == "inconclusive" and "fewer than 2" in row["note"]
    assert pd.isna(row["agrees_in_sensitivity"])


def test_claims_cli_on_a_synthetic_tree(synthetic_tree, tmp_path, capsys):
    variants = sorted({c.variant_a for c in CLAIMS} | {c.variant_b for c in CLAIMS} - {"stts/best_w", "stts/vanilla"})
    root = synthetic_tree(variants, seeds=range(3), settings=("main", "sensitivity"))
    out = tmp_path / "claims.csv"
    assert main(["claims", "--runs", str(root), "--out", str(out), "--n-boot", "50"]) == 0
    table = pd.read_csv(out)
    assert list(table.columns[:9]) == list(COLUMNS) and len(table) == 2 * len(CLAIMS)
    assert set(table["n_seeds"]) == {3}
    stts = table[table["variant_a"] == "stts/best_w"].iloc[0]
    assert stts["metric"] == "fast@1.2/best_turn8" and stts["effect"] == pytest.approx(0.1)
    assert stts["verdict"] == "reproduced"
    runs = pd.read_csv(tmp_path / "claims_runs.csv")
    assert {"fast@1.2/turn3", "train_reward", "hacked/turn1"} <= set(runs["metric"])
    variants_csv = pd.read_csv(tmp_path / "claims_variants.csv")
    assert (variants_csv["n_seeds"] == 3).all()
    out = capsys.readouterr().out
    assert "claim rows tested in the main setting" in out
    # 3 seeds of the plan's 10 (main) and 5 (sensitivity): nothing is reported as if the grid were complete
    assert (table["reported_verdict"] == "incomplete").all() and table["note"].str.contains("incomplete").all()


def test_runs_table_endpoints_and_stts_rows(synthetic_tree):
    from drk.mini2.claims import load_observations, runs_table

    obs, turns = load_observations(synthetic_tree(("trloo", "grpo"), seeds=(0, 1)))
    assert turns == {"T": 3, "S": 8}
    runs = runs_table(obs, turns, n_boot=20)
    assert set(runs[runs["variant"] == "stts/best_w"]["metric"]) == {"fast@1.2/best_turn8"}
    trloo = runs[(runs["variant"] == "trloo") & (runs["seed"] == 1)].set_index("metric")
    assert set(trloo.index) == {"fast@1.2/turn3", "fast@1/turn3", "hacked/turn1", "pr_correct/turn3", "train_reward",
                                "fast@1.2/turn1", "fast@1.2/turn2"}
    assert trloo.loc["fast@1.2/turn3", "value"] == pytest.approx(0.21)  # 0.1 * (1 + 1) + 0.01 * seed
    assert trloo.loc["train_reward", "value"] == pytest.approx(0.21 + (9 + 10) / 2 / 1000)  # steps 9-10
    assert math.isnan(trloo.loc["train_reward", "boot_lo"])  # a training number: no problem bootstrap


def test_a_missing_seed_or_setting_is_never_silently_reported_as_complete():
    """PLAN amendment 2: every claim uses all its setting's seeds, and a reproduced effect must keep its sign in the
    sensitivity setting: a run that did not finish makes its rows 'incomplete', a sensitivity setting not yet run
    makes a main 'reproduced' 'sensitivity_pending' (an audit of the analysis found both passing silently)."""
    d = np.array([0.10, 0.12, 0.08, 0.11, 0.09])
    grpo = np.array([0.2, 0.3, 0.25, 0.1, 0.4])
    main_only = obs_of({("main", "trloo"): grpo + d, ("main", "grpo"): grpo})
    table = claims_table(main_only, TURNS, TWO[:1], n_boot=20, planned_seeds={"main": 5, "sensitivity": 5})
    rows = table.set_index("setting")
    assert rows.loc["main", "verdict"] == "reproduced" and rows.loc["main", "reported_verdict"] == "sensitivity_pending"
    assert rows.loc["sensitivity", "n_seeds"] == 0 and rows.loc["sensitivity", "reported_verdict"] == "incomplete"
    four = {k: v for k, v in main_only.items() if k[2] != 4}  # seed 4's runs never finished
    row = claims_table(four, TURNS, TWO[:1], n_boot=20, planned_seeds={"main": 5}).iloc[0]
    assert row["n_seeds"] == 4 and row["reported_verdict"] == "incomplete" and "4 of the plan's 5" in row["note"]
    both = main_only | obs_of({("sensitivity", "trloo"): grpo + d, ("sensitivity", "grpo"): grpo})
    table = claims_table(both, TURNS, TWO[:1], n_boot=20, planned_seeds={"main": 5, "sensitivity": 5})
    assert (table["reported_verdict"] == "reproduced").all()  # complete, the same sign in both settings


def test_endpoints_cli_writes_only_the_per_run_endpoints(synthetic_tree, tmp_path):
    """``python -m drk.mini2 endpoints``: a tree that is not the plan's grid (trloo alone, e.g. repeated with another
    held-out table for Table 2) gets its runs' endpoints, the same rows ``claims`` writes beside the claims."""
    root = synthetic_tree(("trloo",), seeds=range(2))
    out = tmp_path / "runs.csv"
    assert main(["endpoints", "--runs", str(root), "--out", str(out), "--n-boot", "20"]) == 0
    runs = pd.read_csv(out)
    assert set(runs["variant"]) == {"trloo", "stts/best_w", "stts/vanilla"} and set(runs["seed"]) == {0, 1}
    from drk.mini2.claims import load_observations, runs_table

    expected = runs_table(*load_observations(root), n_boot=20)
    pd.testing.assert_frame_equal(runs, expected, check_dtype=False)
    assert not (tmp_path / "claims.csv").exists()
    assert main(["endpoints", "--runs", str(tmp_path / "empty"), "--out", str(out)]) == 2  # no runs: an error
