import numpy as np
import pytest

from drk.eval.records import EvalRecord
from drk.eval.summary import eval_stats, fast_p_long, fast_p_table, stts_curves


def _records(context="vanilla"):
    """2 levels x 2 problems x 2 samples x 3 turns; sample 0 becomes fast (1.6x) at turn 2, sample 1 is hacked
    at turn 1 and correct but slow (0.9x) afterwards."""
    out = []
    for level in (1, 2):
        for i in range(2):
            for sample in range(2):
                for turn in (1, 2, 3):
                    if sample == 0:
                        fast = turn >= 2
                        rec = dict(status="correct" if fast else "incorrect", correct=fast,
                                   speedup=1.6 if fast else None, coverage=0.8 if fast else None)
                    else:
                        hacked = turn == 1
                        rec = dict(status="hacked" if hacked else "correct", correct=not hacked, hacked=hacked,
                                   speedup=None if hacked else 0.9, coverage=None if hacked else 0.2)
                    out.append(EvalRecord(problem=f"L{level}/p{i}", level=level, sample=sample, turn=turn,
                                          context=context, **rec))
    return out


def test_fast_p_table_per_turn_and_best_with_cis():
    table = fast_p_table(_records(), n_boot=200)
    row = table[(table.p == 1.2) & (table.turn == 1) & (table.aggregation == "last_turn")].iloc[0]
    assert row.fast_p == 0 and row.n_samples == 8
    row = table[(table.p == 1.0) & (table.turn == 3) & (table.aggregation == "best_of_history")].iloc[0]
    assert row.fast_p == pytest.approx(0.5) and row.ci_lo <= 0.5 <= row.ci_hi
    by_level = fast_p_table(_records(), by_level=True, n_boot=50)
    assert set(by_level["level"]) == {1, 2} and len(by_level) == 2 * len(table)


def test_fast_p_long_matches_paper_table_layout():
    rows = fast_p_long(_records(), model="ours-8B", turn=3)
    assert list(rows.columns) == ["model", "level", "p", "fast_p", "reference_mode", "source", "n_samples"]
    assert len(rows) == 2 * 4 and (rows.source == "ours").all() and (rows.reference_mode == "eager").all()
    assert rows.set_index(["level", "p"]).loc[(1, 1.5), "fast_p"] == pytest.approx(0.5)
    assert rows.set_index(["level", "p"]).loc[(2, 2.0), "fast_p"] == 0


def test_eval_stats_hacking_and_profiling_ratio():
    stats = eval_stats(_records())
    assert stats["samples"] == 8 and stats["turns"] == 3
    assert stats["hacking_ratio_last_turn"] == 0
    assert stats["hacking_ratio_all_turns"] == pytest.approx(4 / 24)
    assert stats["correct_rate_last_turn"] == 1.0
    assert stats["profiling_ratio"]["n"] == 16 and stats["profiling_ratio"]["frac_below_tau"] == pytest.approx(0.5)


def test_stts_curves_one_block_per_context():
    curves = stts_curves(_records("vanilla") + _records("best_w"), n_boot=50)
    assert set(curves.context) == {"vanilla", "best_w"}
    assert len(curves) == 2 * 3 * 2
    last = curves[(curves.context == "best_w") & (curves.aggregation == "last_turn")].sort_values("turn")
    np.testing.assert_allclose(last["value"], [0, 0.5, 0.5])
    correct = stts_curves(_records(), kind="correct", n_boot=50)
    assert correct[correct.aggregation == "last_turn"].sort_values("turn")["value"].tolist() == [0, 1, 1]
    with pytest.raises(ValueError, match="fast@p"):
        stts_curves(_records(), kind="speed")
