import json

import pytest

from drk.eval.policies import RequestMeta
from drk.eval.replay import ReplayPolicy, decoy_source, solution_replies
from drk.gym import load_problems
from drk.problems import solution_source


def test_replay_looks_up_by_problem_sample_turn(tmp_path):
    path = tmp_path / "r.jsonl"
    rows = [dict(problem="p", sample=s, turn=t, reply=f"{s}-{t}", extra=1) for s in range(2) for t in (1, 2)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    policy = ReplayPolicy(path)
    out = policy.generate([[], []], n=1, meta=[RequestMeta("p", 2, (1,)), RequestMeta("p", 1, (0,))])
    assert out == [["1-2"], ["0-1"]]
    assert policy.generate([[]], n=2, meta=[RequestMeta("p", 1, (0, 1))]) == [["0-1", "1-1"]]
    assert policy.describe()["replies"] == 4


def test_replay_missing_reply_errors_or_is_empty():
    rows = [dict(problem="p", sample=0, turn=1, reply="x")]
    with pytest.raises(KeyError, match="missing='empty'"):
        ReplayPolicy(rows).generate([[]], n=1, meta=[RequestMeta("p", 2, (0,))])
    assert ReplayPolicy(rows, missing="empty").generate([[]], n=1, meta=[RequestMeta("p", 2, (0,))]) == [[""]]
    with pytest.raises(ValueError, match="RequestMeta"):
        ReplayPolicy(rows).generate([[]], n=1)


def test_solution_replies_cover_every_episode_with_two_wrong_first_turns():
    problems = load_problems("drk:level1")[:2]
    rows = solution_replies(problems, samples=3, turns=2)
    assert len(rows) == 2 * 3 * 2
    first = {(r["problem"], r["sample"]): r["reply"] for r in rows if r["turn"] == 1}
    solution = solution_source(problems[0]).strip()
    assert solution in first[(problems[0].key, 2)] and solution not in first[(problems[0].key, 0)]
    assert "class ModelNew(" in decoy_source(problems[0]) and "class Model(" not in decoy_source(problems[0])
    assert all(solution_source(p).strip() in r["reply"] for p in problems[:1] for r in rows
               if r["turn"] == 2 and r["problem"] == p.key)
