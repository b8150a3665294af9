"""Evaluating a policy: multi-turn episodes against the environment, records written as JSONL.

Every (problem, sample) is an episode of ``turns`` turns. Turn 1 asks for ``samples`` replies per problem; each
later turn asks each episode for one reply, given the context chosen by ``context`` (``drk.eval.context``), whose
last user message is the environment's feedback on the previous answer. Every reply is evaluated (batched through
the injected ``evaluator``) and becomes one :class:`~drk.eval.records.EvalRecord`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from drk.chat import answer_text
from drk.eval.context import CONTEXTS, Turn, build_messages, task_messages
from drk.eval.policies import Policy, RequestMeta
from drk.eval.records import EvalRecord, append_records, write_run_config

#: ``evaluator(pairs) -> results``: one ``EvalResult`` per ``(problem, reply)``, in order.
Evaluator = Callable[[list[tuple[Any, str]]], list[Any]]


def default_evaluator(eval_config: Any = None, device: str = "auto", *, cache_dir: str | Path | None = None,
                      workers: int | None = None) -> Evaluator:
    """The real environment: ``drk.gym.Pool(...).map`` (concurrent; identical pairs evaluated once).

    Args:
        eval_config: a ``drk.gym.EvalConfig`` (default settings when None).
        device: ``"auto"``, ``"cuda"`` or ``"cpu"``.
        cache_dir: result cache shared across turns and runs (None: no cache).
        workers: concurrent evaluations (Pool's default when None).
    """
    from drk.gym import Pool

    return Pool(device=device, workers=workers, cache_dir=cache_dir, config=eval_config).map


def evaluate_policy(policy: Policy, problems: Sequence[Any], *, samples: int = 8, turns: int = 3,
                    temperature: float = 1.0, top_p: float = 0.95, max_new_tokens: int = 8192,
                    eval_config: Any = None, evaluator: Evaluator | None = None, device: str = "auto",
                    context: str = "vanilla", window: int = 4, use_profiling_ratio: bool = False,
                    out_path: str | Path | None = None) -> list[EvalRecord]:
    """Run ``samples`` episodes of ``turns`` turns per problem and score every turn.

    Args:
        policy: a :class:`~drk.eval.policies.Policy`.
        problems: ``drk.gym.Problem`` objects.
        samples, turns: episodes per problem and turns per episode (paper: 8 and 3; STTS: up to 14 turns).
        temperature, top_p, max_new_tokens: sampling settings (paper: 1.0, 0.95, 8192).
        eval_config: a ``drk.gym.EvalConfig``; its ``reference_mode`` and ``timing_policy`` are recorded.
        evaluator: scores ``(problem, reply)`` pairs; default :func:`default_evaluator`.
        device: the environment's device when ``evaluator`` is None.
        context: ``"vanilla"`` (whole history) or ``"best_w"`` (best ``window`` turns by reward).
        use_profiling_ratio: rank turns by the Eq. 8 reward (with the PR term) instead of Eq. 1.
        out_path: JSONL file for the records (rewritten), with ``<stem>.config.json`` beside it.

    Returns:
        One record per (problem, sample, turn), in turn-major order.
    """
    from drk.rl.rewards import turn_reward

    _validate(samples=samples, turns=turns, context=context, window=window)
    if eval_config is None:
        from drk.gym import EvalConfig

        eval_config = EvalConfig()
    evaluate = evaluator or default_evaluator(eval_config, device)
    episodes = [(problem, sample) for problem in problems for sample in range(samples)]
    histories: dict[tuple[str, int], list[Turn]] = {(p.key, s): [] for p, s in episodes}
    if out_path is not None:
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        Path(out_path).write_text("")
        write_run_config(out_path, _run_config(policy, problems, eval_config, samples=samples, turns=turns,
                                               temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens,
                                               context=context, window=window,
                                               use_profiling_ratio=use_profiling_ratio))
    sampling = {"temperature": temperature, "top_p": top_p, "max_new_tokens": max_new_tokens}
    records: list[EvalRecord] = []
    for turn in range(1, turns + 1):
        replies = _generate_turn(policy, problems, episodes, histories, turn, samples, sampling, context, window)
        # The environment scores the answer part of each reply (reasoning in <think> blocks dropped, as in training).
        results = evaluate([(problem, answer_text(reply)) for (problem, _), reply in zip(episodes, replies, strict=True)])
        new = []
        for (problem, sample), reply, result in zip(episodes, replies, results, strict=True):
            reward = turn_reward(result, use_profiling_ratio=use_profiling_ratio)
            histories[(problem.key, sample)].append(Turn(turn, reply, result.feedback, reward))
            new.append(EvalRecord.from_result(result, problem=problem.key, level=problem.level, sample=sample,
                                              turn=turn, reward=reward, reply=reply, context=context,
                                              policy=_policy_label(policy)))
        if out_path is not None:
            append_records(out_path, new)
        records += new
    return records


def _generate_turn(policy, problems, episodes, histories, turn, samples, sampling, context, window) -> list[str]:
    """Replies of every episode at ``turn``, aligned with ``episodes``."""
    if turn == 1:
        meta = [RequestMeta(p.key, 1, tuple(range(samples))) for p in problems]
        out = policy.generate([task_messages(p) for p in problems], n=samples, meta=meta, **sampling)
        return [reply for replies in out for reply in replies]
    conversations = [build_messages(task_messages(p), histories[(p.key, s)], context=context, window=window)
                     for p, s in episodes]
    meta = [RequestMeta(p.key, turn, (s,)) for p, s in episodes]
    return [replies[0] for replies in policy.generate(conversations, n=1, meta=meta, **sampling)]


def _policy_label(policy) -> str:
    """Short name of the policy for records: its model, else its kind."""
    info = policy.describe()
    return str(info.get("model") or info.get("kind", type(policy).__name__))


def _validate(*, samples: int, turns: int, context: str, window: int) -> None:
    if samples < 1 or turns < 1:
        raise ValueError(f"samples={samples}, turns={turns}: both must be >= 1")
    if context not in CONTEXTS:
        raise ValueError(f"context={context!r}: choose one of {CONTEXTS}")
    if window < 1:
        raise ValueError(f"window={window}: must be >= 1 (the paper uses 4)")


def _run_config(policy, problems, eval_config, **settings) -> dict[str, Any]:
    """The resolved settings of a run, as saved beside its records."""
    cfg = eval_config.to_dict() if hasattr(eval_config, "to_dict") else dict(eval_config or {})
    return {"policy": policy.describe(), "problems": [p.key for p in problems], "eval_config": cfg, **settings}
