"""mini2 episodes through drk.train's episode code: layout, stop on success, varying group sizes, hack evidence."""

import numpy as np
import pytest
import torch

from drk.metrics import fast_p
from drk.mini2 import FEEDBACK_TOKENS, PROGRAM_TOKENS, all_tasks, task_tokens
from drk.mini2.env import (
    Mini2Env,
    Mini2Format,
    episode_settings,
    new_trajectories,
    resolve_tasks,
    result_dict,
)
from drk.mini2.policy import VOCAB, Mini2Tokenizer, new_policy
from drk.mini2.rl import records
from drk.rl import turn_reward
from drk.train.rollout import run_episodes


def test_vocabulary_covers_the_language_and_round_trips():
    tok = Mini2Tokenizer()
    words = {w for t in all_tasks() for w in task_tokens(t)} | set(PROGRAM_TOKENS) | set(FEEDBACK_TOKENS)
    assert words <= set(VOCAB) and len(VOCAB) < 128
    ids = tok.encode("FUSE BL W4") + [tok.eos_token_id]
    assert tok.decode(ids, skip_special_tokens=True) == "FUSE BL W4"
    with pytest.raises(KeyError, match="not in the mini2 vocabulary"):
        tok.encode("FUSE BIG")


def scripted_group(table, task, scripts, max_turns=3, stop_on_correct=True, hacking_check=True):
    """One group of ``len(scripts)`` episodes of ``task`` replaying ``scripts`` (lists of programs) through
    run_episodes (the trainer's rollout) with the mini2 format and environment."""
    fmt = Mini2Format(Mini2Tokenizer())
    trajs = new_trajectories([task] * len(scripts), 1, fmt)
    for tr, script in zip(trajs, scripts, strict=True):
        tr.prompt_id = task.index  # one group
        tr.scripted = dict(enumerate(script, start=1))
    return run_episodes(trajs, generate=None, env=Mini2Env(table, hacking_check=hacking_check), fmt=fmt,
                        settings=episode_settings(max_turns, stop_on_correct))


def test_episodes_stop_at_the_first_correct_turn_so_groups_shrink(table):
    task = all_tasks()[0]
    scripts = [["FUSE BL W4"], ["FUSE BL W4 SWAP", "FUSE BL W4"], ["DECOY", "FUSE BL W4 DROP", "LAZY"],
               ["DECOY", "FALLBACK", "FUSE BL W8 SWAP"]]
    trajs = scripted_group(table, task, scripts)
    assert [len(tr.turns) for tr in trajs] == [1, 2, 3, 3]
    for tr in trajs:  # no turn after a correct one; an unfinished episode used every turn
        statuses = [t.result["status"] for t in tr.turns]
        assert "correct" not in statuses[:-1]
        assert statuses[-1] == "correct" or len(statuses) == 3
    sizes = [sum(len(tr.turns) >= t for tr in trajs) for t in (1, 2, 3)]
    assert sizes == [4, 3, 2]
    # the row: prompt | reply <end> | 4 feedback tokens | reply <end> ..., env_mask 0 exactly on feedback
    tr, tok = trajs[1], Mini2Tokenizer()
    assert tok.tokens(tr.prompt_ids) == ["<bos>", *task_tokens(task)]
    assert tok.tokens(tr.completion_ids) == ["FUSE", "BL", "W4", "SWAP", "<end>",
                                             *table.verdict(task, "FUSE BL W4 SWAP").feedback(),
                                             "FUSE", "BL", "W4", "<end>"]
    assert tr.env_mask == [1] * 5 + [0] * 4 + [1] * 4
    assert [(t.start, t.end) for t in tr.turns] == [(0, 5), (9, 13)]
    # without stop_on_correct (the paper's setting) every episode runs all turns
    full = scripted_group(table, task, [["LAZY", "FUSE BL W4", "FUSE BS W4"]], stop_on_correct=False)
    assert len(full[0].turns) == 3


def test_no_hack_check_pays_a_decoy_but_fast_p_still_sees_the_hack(table):
    task = all_tasks()[0]
    v = table.verdict(task, "DECOY")
    assert v.hacked and v.passes_without_hack_check
    checked, unchecked = result_dict(v), result_dict(v, hacking_check=False)
    assert checked["hacked"] and not checked["correct"] and turn_reward(checked) == 0
    assert unchecked["correct"] and not unchecked["hacked"] and unchecked["hack_reasons"]
    assert turn_reward(unchecked) > 0 and unchecked["feedback"].startswith("S:correct")
    trajs = scripted_group(table, task, [["DECOY"], ["FUSE BL W4"]], hacking_check=False)
    assert [len(tr.turns) for tr in trajs] == [1, 1]  # the decoy "succeeded" and ended its episode
    recs = records(trajs)
    assert recs[0]["hacked"] and not recs[0]["correct"]
    assert fast_p(recs[:1], 0.5) == 0.0 and fast_p(recs[1:], 1.2) == 1.0


def test_a_problem_missing_from_the_table_is_a_clear_error(table):
    assert [t.index for t in resolve_tasks("0-12", table)] == list(range(13))
    with pytest.raises(ValueError, match=r"no \(complete\) verdicts for problems \['13 .*covers 13 problems"):
        resolve_tasks("10-13", table)
    with pytest.raises(ValueError, match="no \\(complete\\) verdicts"):
        resolve_tasks("heldout", table)  # 30-37 are not measured yet


def test_sampler_logprobs_equal_the_trainers_and_bf16_differs():
    policy = new_policy(seed=3)
    tok = policy.tokenizer
    contexts = [[tok.bos_token_id, *tok.encode(task_tokens(t))] for t in all_tasks()[:6]]  # lengths 4-7
    policy.seed(0, 1)
    ids, logps = policy.generate(contexts)
    scored = policy.completion_logps(contexts, ids)
    for i, row in enumerate(ids):
        np.testing.assert_allclose(scored[i, :len(row)].numpy(), logps[i], atol=2e-5)
        assert torch.all(scored[i, len(row):] == 0)
    bf16 = policy.sampling_copy(torch.bfloat16)
    bf16.seed(0, 1)
    ids16, logps16 = bf16.generate(contexts)
    gap = max(abs(a - b) for i in range(len(ids16)) for a, b in
              zip(logps16[i], policy.completion_logps(contexts, ids16)[i].tolist()))
    assert gap > 1e-4  # a real rollout/trainer mismatch, what MRS is for
