"""mini2's figures with bands over seeds (drk.figures.mini2), drawn from a synthetic grid tree: one line per variant
(mean over seeds), one band per variant with two or more seeds, and the band is the t-interval of the seeds."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402

from drk.figures import mini2 as figs  # noqa: E402
from drk.figures.build import make_mini2_figures  # noqa: E402
from drk.mini2.runs import load_stts, load_training  # noqa: E402
from drk.mini2.stats import t_quantile  # noqa: E402

VARIANTS = ("trloo", "grpo", "grpo_rescaled", "single_turn", "gamma0", "no_hack_check", "pr", "prs_soft",
            "prs_hard", "mrs", "mrs_bf16", "no_mrs_bf16", "mrs_stale")


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def counts(ax):
    """(lines, bands) drawn in ``ax``."""
    return len(ax.get_lines()), sum(isinstance(c, PolyCollection) for c in ax.collections)


@pytest.fixture
def tree(synthetic_tree):
    return synthetic_tree(VARIANTS, seeds=(0, 1, 2))


@pytest.mark.parametrize("plot, n_panels, n_variants", [
    (figs.plot_estimators, 2, 3), (figs.plot_hacking_check, 4, 2), (figs.plot_mrs, 4, 5), (figs.plot_prs, 2, 4),
    (figs.plot_turns, 2, 3)])
def test_each_panel_has_a_line_and_a_band_per_variant(tree, plot, n_panels, n_variants):
    log = load_training(tree)
    fig, axes = plot(log)
    assert len(axes) == n_panels
    for ax in axes:
        assert counts(ax) == (n_variants, n_variants), ax.get_ylabel()
        assert not any("not logged" in t.get_text() for t in ax.texts)


def test_stts_lines_and_bands(tree):
    stts = load_stts(tree)
    fig, ax = figs.plot_stts_seeds(stts)
    assert counts(ax) == (2, 2)
    line = ax.get_lines()[0]  # vanilla: 0.2 + 0.01 * seed at every turn
    assert list(line.get_xdata()) == list(range(1, 9)) and np.allclose(line.get_ydata(), 0.21)


def test_band_is_the_t_interval_over_seeds_and_one_seed_has_none(synthetic_tree):
    root = synthetic_tree(("trloo", "grpo"), seeds=(0, 1, 2))
    log = load_training(root)
    fig, ax = figs.plot_seed_bands(log, "heldout/fast@1.2/turn3", variants=["grpo"])
    band = next(c for c in ax.collections if isinstance(c, PolyCollection))
    ys = band.get_paths()[0].vertices[:, 1]
    mean, half = 0.11, t_quantile(0.975, 2) * 0.01  # values 0.1 + 0.01 * seed: sd 0.01, n = 3
    assert ys.min() == pytest.approx(mean - half / np.sqrt(3)) and ys.max() == pytest.approx(mean + half / np.sqrt(3))
    one = log[log["seed"] == 0]
    fig, ax = figs.plot_seed_bands(one, "heldout/fast@1.2/turn3")
    assert counts(ax) == (2, 0)
    fig, ax = figs.plot_seed_bands(log, "entropy")
    assert counts(ax) == (0, 0) and any("not logged" in t.get_text() for t in ax.texts)


def test_make_mini2_figures_writes_every_figure(tree, tmp_path):
    paths = make_mini2_figures(tmp_path / "out", tree)
    pngs = sorted(p.name for p in paths if p.suffix == ".png")
    assert pngs == [f"mini2_main_{n}.png" for n in ("estimators", "hacking_check", "mrs", "prs", "stts", "turns")]
    assert make_mini2_figures(tmp_path / "none", None) == []


def test_an_export_draws_the_same_figures_from_small_files(tree, tmp_path):
    """The committed results/mini2/curves stand in for the ~60 MB grid tree: the readers give the figures' metrics
    and the STTS table unchanged, and the figures are the same set."""
    from drk.mini2.__main__ import main
    from drk.mini2.runs import FIGURE_TRAINING_METRICS, load_stts, load_training

    out = tmp_path / "curves"
    assert main(["export", "--runs", str(tree), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["curves_main.csv.gz", "stts_main.csv"]
    full, small = load_training(tree), load_training(out)
    kept = full[full["metric"].isin(FIGURE_TRAINING_METRICS) | full["metric"].str.startswith("heldout/")]
    assert len(small) == len(kept) > 0 and set(small["metric"]) == set(kept["metric"])
    key = ["variant", "seed", "step", "metric"]
    merged = kept.merge(small, on=key, suffixes=("", "_export"))
    assert len(merged) == len(kept) and np.allclose(merged["value"], merged["value_export"], rtol=1e-5)
    stts_full, stts_small = load_stts(tree), load_stts(out)
    assert len(stts_small) == len(stts_full) and np.allclose(stts_small["value"], stts_full["value"], rtol=1e-5)
    from_tree = sorted(p.name for p in make_mini2_figures(tmp_path / "a", tree) if p.suffix == ".png")
    assert sorted(p.name for p in make_mini2_figures(tmp_path / "b", out) if p.suffix == ".png") == from_tree
    assert main(["export", "--runs", str(tmp_path / "a"), "--out", str(tmp_path / "c")]) == 2  # no runs: clear error
