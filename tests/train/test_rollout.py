"""Multi-turn episodes with a fake generator and environment: row layout, masks, spans, stopping, overlap."""

import math
import threading

import pytest

from drk.chat import PromptFormat
from drk.train.rollout import EpisodeSettings, Trajectory, run_episodes


class Problem:
    def __init__(self, name):
        self.name = name
        self.source = f"# {name}\nclass Model: pass"


@pytest.fixture(scope="module")
def fmt():
    from drk.models import train_tiny_tokenizer

    return PromptFormat(train_tiny_tokenizer())


def fake_generate(fmt, reply_len=3):
    eos = fmt.tokenizer.eos_token_id

    def generate(contexts):
        ids = [[10 + i % 5] * (reply_len - 1) + [eos] for i, _ in enumerate(contexts)]
        return ids, [[-0.5] * len(x) for x in ids]

    return generate


def env_correct_at(turns_correct):
    """Env whose verdict depends on how many replies each problem has received so far."""
    calls = {}

    def env(problems, replies):
        out = []
        for p in problems:
            calls[p.name] = calls.get(p.name, 0) + 1
            ok = calls[p.name] in turns_correct
            out.append({"status": "correct" if ok else "compile_error", "correct": ok, "hacked": False,
                        "speedup": None, "coverage": None, "feedback": f"feedback {calls[p.name]}"})
        return out

    return env


def make_trajs(fmt, n, scripted=None):
    return [Trajectory(prompt_id=i, traj_id=i, problem=Problem(f"p{i}"), prompt_ids=fmt.prompt_ids(f"src{i}"),
                       scripted=dict(scripted or {}) if i == 0 else {}) for i in range(n)]


def test_row_layout_masks_and_spans(fmt):
    trajs = make_trajs(fmt, 2)
    run_episodes(trajs, generate=fake_generate(fmt), env=env_correct_at(set()), fmt=fmt,
                 settings=EpisodeSettings(max_turns=3, max_reply_tokens=8, max_context_tokens=4096))
    for tr in trajs:
        assert [t.turn for t in tr.turns] == [1, 2, 3]
        assert len(tr.completion_ids) == len(tr.env_mask) == len(tr.logprobs)
        # reply tokens are exactly the env_mask == 1 positions; feedback sits between replies
        reply_pos = {k for t in tr.turns for k in range(t.start, t.end)}
        assert reply_pos == {k for k, m in enumerate(tr.env_mask) if m == 1}
        assert tr.turns[0].start == 0 and tr.turns[-1].end == len(tr.completion_ids)  # no trailing feedback
        fb = tr.completion_ids[tr.turns[0].end:tr.turns[1].start]
        assert "feedback 1" in fmt.tokenizer.decode(fb)
        assert all(tr.logprobs[k] == 0.0 for k in range(len(tr.env_mask)) if tr.env_mask[k] == 0)
        assert tr.turns[1].result["feedback"] == "feedback 2"


def test_feedback_does_not_duplicate_end_of_turn(fmt):
    trajs = make_trajs(fmt, 1)
    run_episodes(trajs, generate=fake_generate(fmt), env=env_correct_at(set()), fmt=fmt,
                 settings=EpisodeSettings(max_turns=2, max_reply_tokens=8, max_context_tokens=4096))
    text = fmt.tokenizer.decode(trajs[0].completion_ids)
    assert text.count("<|im_end|>") == 3  # reply 1, feedback message, reply 2 (none doubled)
    assert "<|im_end|><|im_end|>" not in text


def test_stop_on_correct_shrinks_later_turns(fmt):
    trajs = make_trajs(fmt, 3)
    env = env_correct_at({1})  # every first answer is correct
    run_episodes(trajs, generate=fake_generate(fmt), env=env, fmt=fmt,
                 settings=EpisodeSettings(max_turns=3, max_reply_tokens=8, max_context_tokens=4096,
                                          stop_on_correct=True))
    assert all(len(tr.turns) == 1 for tr in trajs)


def test_context_budget_ends_episode(fmt):
    trajs = make_trajs(fmt, 1)
    budget = len(trajs[0].prompt_ids) + 3 + 8 + 10  # room for one reply, not for feedback + another reply
    run_episodes(trajs, generate=fake_generate(fmt), env=env_correct_at(set()), fmt=fmt,
                 settings=EpisodeSettings(max_turns=3, max_reply_tokens=8, max_context_tokens=budget))
    assert len(trajs[0].turns) == 1 and all(m == 1 for m in trajs[0].env_mask)


def test_scripted_reply_is_replayed_with_unknown_logprobs(fmt):
    trajs = make_trajs(fmt, 2, scripted={1: "```python\nA = 1\n```"})
    seen = []

    def env(problems, replies):
        seen.extend(replies)
        return [{"status": "format_error", "correct": False, "feedback": "x"} for _ in replies]

    run_episodes(trajs, generate=fake_generate(fmt), env=env, fmt=fmt,
                 settings=EpisodeSettings(max_turns=2, max_reply_tokens=8, max_context_tokens=4096))
    t1 = trajs[0].turns[0]
    assert t1.scripted and t1.reply.strip().startswith("```python")
    assert all(math.isnan(x) for x in trajs[0].logprobs[t1.start:t1.end])
    assert not trajs[0].turns[1].scripted and not trajs[1].turns[0].scripted
    assert "```python\nA = 1\n```" in seen


def test_env_overlaps_generation_of_next_chunk(fmt):
    """Chunk 1's evaluation must run while chunk 2 is being generated (it waits for that to start)."""
    started_chunk2 = threading.Event()
    generated = []

    def generate(contexts):
        generated.append(len(contexts))
        if len(generated) == 2:
            started_chunk2.set()
        return fake_generate(fmt)(contexts)

    def env(problems, replies):
        if problems[0].name == "p0":
            assert started_chunk2.wait(timeout=10), "evaluation did not overlap the next generation"
        return [{"status": "format_error", "correct": False, "feedback": "x"} for _ in replies]

    trajs = make_trajs(fmt, 4)
    run_episodes(trajs, generate=generate, env=env, fmt=fmt,
                 settings=EpisodeSettings(max_turns=1, max_reply_tokens=8, max_context_tokens=4096, chunk_size=2))
    assert generated == [2, 2]


def test_generate_contract_violation_is_an_error(fmt):
    with pytest.raises(RuntimeError, match="replies for"):
        run_episodes(make_trajs(fmt, 2), generate=lambda ctx: ([[1]], None), env=env_correct_at(set()), fmt=fmt,
                     settings=EpisodeSettings(max_turns=1, max_reply_tokens=8, max_context_tokens=4096))


def test_prompt_longer_than_the_budget_is_an_error(fmt):
    with pytest.raises(ValueError, match="max_context_tokens"):
        run_episodes(make_trajs(fmt, 1), generate=fake_generate(fmt), env=env_correct_at(set()), fmt=fmt,
                     settings=EpisodeSettings(max_turns=1, max_reply_tokens=8, max_context_tokens=20))
