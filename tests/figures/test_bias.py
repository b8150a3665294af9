"""Bias-study figures: they draw the tidy tables, return (fig, ax), and write nothing."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from drk.figures.bias import plot_bandit_curves, plot_per_turn_shrink, plot_shrink_factor  # noqa: E402
from drk.rl.bias import BanditConfig, per_turn_shrink, run_bandit, shrink_factors, summarize_curves  # noqa: E402


@pytest.fixture(autouse=True)
def _close_and_stay_put(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield
    plt.close("all")
    assert list(tmp_path.iterdir()) == []  # plotting functions never save


def test_plot_shrink_factor():
    fig, ax = plot_shrink_factor(shrink_factors((2, 4, 8), n_groups=500))
    labels = ax.get_legend_handles_labels()[1]
    assert any("GRPO" in s for s in labels) and any("TRLOO" in s for s in labels)
    assert ax.get_xscale() == "log" and fig is ax.figure


def test_plot_per_turn_shrink_on_given_axes():
    fig0, ax0 = plt.subplots()
    fig, ax = plot_per_turn_shrink(
        per_turn_shrink(rollouts=(4,), stop_probs=(0.1, 0.5), n_groups=500), ax=ax0
    )
    assert ax is ax0 and fig is fig0
    assert len(ax.get_legend_handles_labels()[1]) == 2


def test_plot_bandit_curves():
    curves = summarize_curves(run_bandit(BanditConfig(steps=20), n_runs=4), "expected_reward")
    fig, ax = plot_bandit_curves(curves, optimum=BanditConfig().optimal_reward)
    labels = ax.get_legend_handles_labels()[1]
    assert {"GRPO", "TRLOO"} <= set(labels) and any("optimum" in s for s in labels)
    assert ax.get_ylabel() == "expected episode reward"
