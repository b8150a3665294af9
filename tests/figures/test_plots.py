import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import FancyBboxPatch

from drk.data.paper import load_fig2_curves, load_fig10_examples
from drk.figures.architecture import OUR_ARCHITECTURE, plot_architecture
from drk.figures.hacking import fig2_from_training_log, plot_hacking_check_curves, plot_hacking_ratio
from drk.figures.profiling import plot_profiling_examples
from drk.figures.scaling import plot_stts
from drk.figures.training import (
    DYNAMICS_PANELS,
    plot_fast_p_vs_step,
    plot_fast_p_vs_turn,
    plot_metric_vs_step,
    plot_prs_ablation,
    plot_training_panels,
    validate_training_log,
)


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_fig2_left_paper_has_three_series():
    fig, ax = plot_hacking_check_curves(load_fig2_curves().frame)
    assert len(ax.get_lines()) == 3 and len(_legend(ax)) == 3


def test_fig2_left_adds_our_dashed_series(training_log):
    ours = fig2_from_training_log(training_log)
    assert set(ours["hacking_check"]) == {True, False} and set(ours["p"]) == {1.0, 1.2}
    fig, ax = plot_hacking_check_curves(pd.concat([load_fig2_curves().frame, ours]))
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(ax.get_lines()) == 7 and len(dashed) == 4
    assert any("(ours)" in t for t in _legend(ax))


def test_fig10_paper_beside_ours_with_missing_cpu_speedup():
    ours = pd.DataFrame({"case": ["decoy", "lazy_optimization", "better_fusion"], "speedup": [None] * 3,
                         "coverage": [0.0, 0.02, 0.9], "status": ["hacked", "correct", "correct"],
                         "source": "ours"})
    fig, axes = plot_profiling_examples(pd.concat([load_fig10_examples().frame, ours]))
    assert len(axes) == 2
    assert len(axes[0].patches) == 4  # PR: 2 paper + ours' 2 non-zero shares (the log axis has no place for 0)
    assert axes[0].get_yscale() == "log"  # a lazy share of 1e-4 is visible
    assert sum(t.get_text() == "hacked" for t in axes[0].texts) == 1  # the decoy's 0 is labelled, not dropped
    assert len(axes[1].patches) == 2  # speedup: ours is None on CPU
    assert sum(t.get_text() == "n/a" for t in axes[1].texts) == 3  # 2 ours + the paper's missing decoy
    assert sum(t.get_text() == "hacked" for t in axes[1].texts) == 1
    handles = axes[1].get_legend().legend_handles
    assert [h.get_label() for h in handles] == ["paper", "ours"] and handles[0].get_facecolor() != handles[1].get_facecolor()
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["lazy\noptimization", "better\nfusion", "decoy"]


def test_fig10_a_hacked_candidates_measured_speedup_says_it_is_hacked():
    rows = pd.DataFrame({"case": ["decoy", "better_fusion"], "speedup": [0.99, 1.3], "coverage": [0.0, 1.0],
                         "status": ["hacked", "correct"], "source": "ours"})
    fig, axes = plot_profiling_examples(rows)
    labels = [t.get_text() for t in axes[1].texts]
    assert "0.99x\nhacked" in labels and "1.30x" in labels


def test_fig10_needs_two_axes():
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="need 2 axes"):
        plot_profiling_examples(load_fig10_examples().frame, ax=ax)


def test_fig3_draws_every_component():
    fig, ax = plot_architecture()
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
    spec = OUR_ARCHITECTURE
    assert len(boxes) == len(spec.clients) + 1 + len(spec.workers) + 1 + len(spec.stages)
    text = " ".join(t.get_text() for t in ax.texts)
    for name, _ in spec.stages:
        assert name in text


def test_metric_vs_step_one_line_per_method_with_band_for_repeats(training_log):
    fig, ax = plot_metric_vs_step(training_log, "entropy")
    assert _legend(ax) == ["trloo", "grpo", "no_hack_check"]
    assert len(ax.collections) == 3  # min-max bands: two runs per method


def test_missing_metric_leaves_a_note_not_an_error(training_log):
    fig, ax = plot_metric_vs_step(training_log, "grad_norm")
    assert not ax.get_lines() and "not logged" in ax.texts[0].get_text()


def test_fast_p_vs_step_and_turn(training_log):
    _, ax = plot_fast_p_vs_step(training_log, methods=["grpo", "trloo", "absent"])
    assert _legend(ax) == ["grpo", "trloo"]
    _, ax = plot_fast_p_vs_turn(training_log)
    assert len(ax.get_lines()) == 3  # the PRS runs log no Fast@1
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [1, 2, 3])


def test_tidy_log_schema_and_held_out_metrics_preferred(training_log):
    assert list(training_log.columns) == ["step", "method", "run", "metric", "value"]
    assert "note" not in set(training_log["metric"])
    held_out = training_log.assign(metric=training_log["metric"].str.replace("gym/fast@", "eval/fast@"))
    _, ax = plot_fast_p_vs_turn(held_out.iloc[: len(held_out) // 2])
    assert len(ax.get_lines()) >= 1
    mixed = pd.concat([training_log, held_out[held_out.method == "grpo"]])
    _, ax = plot_fast_p_vs_step(mixed)
    assert _legend(ax) == ["grpo"]  # eval/ wins when present


def test_training_panels_keep_layout_when_metrics_are_missing(training_log):
    fig, axes = plot_training_panels(training_log)
    assert len(axes) == len(DYNAMICS_PANELS)
    assert [len(ax.get_lines()) for ax in axes] == [6, 3, 0, 0, 0]
    assert sum(ax.get_legend() is not None for ax in axes) == 1


def test_prs_ablation_shows_three_variants(training_log):
    fig, axes = plot_prs_ablation(training_log)
    assert len(axes) == 2 and all(len(ax.get_lines()) == 3 for ax in axes)
    assert _legend(axes[0]) == ["prs_soft", "prs_hard", "pr"]


def test_hacking_ratio_and_schema_validation(training_log):
    _, ax = plot_hacking_ratio(training_log)
    assert len(ax.get_lines()) == 3
    with pytest.raises(ValueError, match="lacks columns"):
        validate_training_log(training_log.drop(columns="metric"))


def test_stts_four_lines_and_kind_filter():
    rows = [dict(turn=t, context=c, aggregation=a, kind=k, p=1.2, value=0.1 * t, ci_lo=0.0, ci_hi=0.2)
            for c in ("vanilla", "best_w") for a in ("last_turn", "best_of_history")
            for k in ("fast@p", "correct") for t in range(1, 6)]
    fig, ax = plot_stts(pd.DataFrame(rows))
    assert len(ax.get_lines()) == 4 and "context management, best of history" in _legend(ax)
    assert ax.get_ylabel() == "Fast@1.2 (%)"
    _, ax = plot_stts(pd.DataFrame(rows), kind="correct")
    assert len(ax.get_lines()) == 4 and ax.get_ylabel() == "correct (%)"
