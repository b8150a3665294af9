import pytest

from drk.eval.context import Turn, build_messages, select_window

TASK = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]


def _history(rewards):
    return [Turn(i + 1, f"reply{i + 1}", f"fb{i + 1}", r) for i, r in enumerate(rewards)]


def test_select_window_keeps_best_in_turn_order_and_prefers_recent_ties():
    history = _history([0.0, 2.5, 0.0, 1.0, 0.0, 3.0])
    assert [t.turn for t in select_window(history, 4)] == [2, 4, 5, 6]
    assert [t.turn for t in select_window(history[:3], 4)] == [1, 2, 3]


def test_vanilla_keeps_every_turn_and_ends_with_feedback():
    messages = build_messages(TASK, _history([0, 0, 0, 0, 0]), context="vanilla")
    assert len(messages) == 2 + 2 * 5
    assert messages[-1]["role"] == "user" and "fb5" in messages[-1]["content"]
    assert [m["content"] for m in messages if m["role"] == "assistant"] == [f"reply{i}" for i in range(1, 6)]


def test_best_w_matches_vanilla_until_the_window_fills():
    history = _history([0, 1, 0, 2])
    assert build_messages(TASK, history, context="best_w", window=4) == build_messages(TASK, history)
    messages = build_messages(TASK, _history([0, 1, 0, 2, 0, 0.5]), context="best_w", window=2)
    assert [m["content"] for m in messages if m["role"] == "assistant"] == ["reply2", "reply4"]


def test_bad_choices_are_rejected_with_the_valid_ones():
    with pytest.raises(ValueError, match="vanilla"):
        build_messages(TASK, [], context="all")
    with pytest.raises(ValueError, match="window"):
        select_window([], 0)
