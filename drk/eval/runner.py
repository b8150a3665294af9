"""Evaluating a policy: multi-turn episodes against the environment, records written as JSONL.

Every (problem, sample) is an episode of ``turns`` turns. Turn 1 asks for ``samples`` replies per problem; each
later turn asks each episode for one reply, given the context chosen by ``context`` (``drk.eval.context``), whose
last user message is the environment's feedback on the previous answer. Every reply is evaluated (batched through
the injected ``evaluator``) and becomes one :class:`~drk.eval.records.EvalRecord`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
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


@dataclass(frozen=True)
class EvalRunConfig:
    """How a policy is evaluated: episodes, sampling, context and environment settings (validated on creation).

    Saved with the records (``<stem>.config.json``), so a record file says how it was made.
    """

    samples: int = 8  # episodes per problem (paper: 8)
    turns: int = 3  # turns per episode (paper: 3; STTS: up to 14)
    temperature: float = 1.0  # paper: 1.0
    top_p: float = 0.95  # paper: 0.95
    max_new_tokens: int = 8192  # paper: 8192
    context: str = "vanilla"  # "vanilla" (whole history) or "best_w" (best ``window`` turns by reward)
    window: int = 4  # best-w window (paper: 4)
    use_profiling_ratio: bool = False  # rank turns by the Eq. 8 reward (with the PR term) instead of Eq. 1
    device: str = "auto"  # the environment's device when no evaluator is given
    eval_config: Any = None  # a drk.gym.EvalConfig (None: its defaults); its reference_mode / timing_policy are recorded

    def __post_init__(self) -> None:
        from drk.gym import EvalConfig

        if self.samples < 1 or self.turns < 1:
            raise ValueError(f"samples={self.samples}, turns={self.turns}: both must be >= 1")
        if self.context not in CONTEXTS:
            raise ValueError(f"context={self.context!r}: choose one of {CONTEXTS}")
        if self.window < 1:
            raise ValueError(f"window={self.window}: must be >= 1 (the paper uses 4)")
        if self.max_new_tokens < 1 or self.temperature < 0 or not 0 < self.top_p <= 1:
            raise ValueError(f"max_new_tokens={self.max_new_tokens} must be >= 1, temperature={self.temperature} "
                             f">= 0 and top_p={self.top_p} in (0, 1]")
        if self.eval_config is None:
            object.__setattr__(self, "eval_config", EvalConfig())
        elif isinstance(self.eval_config, dict):
            object.__setattr__(self, "eval_config", EvalConfig.from_dict(self.eval_config))

    @property
    def sampling(self) -> dict[str, Any]:
        """The keyword arguments of ``Policy.generate`` these settings fix."""
        return {"temperature": self.temperature, "top_p": self.top_p, "max_new_tokens": self.max_new_tokens}

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)} | {"eval_config": self.eval_config.to_dict()}


def evaluate_policy(policy: Policy, problems: Sequence[Any], config: EvalRunConfig | None = None, *,
                    evaluator: Evaluator | None = None, out_path: str | Path | None = None,
                    **settings: Any) -> list[EvalRecord]:
    """Run ``config.samples`` episodes of ``config.turns`` turns per problem and score every turn.

    Args:
        policy: a :class:`~drk.eval.policies.Policy`.
        problems: ``drk.gym.Problem`` objects.
        config: an :class:`EvalRunConfig`; or leave it out and pass its fields as keywords
            (``samples=2, turns=2, ...``), which build one.
        evaluator: scores ``(problem, reply)`` pairs; default :func:`default_evaluator` on ``config.device``.
        out_path: JSONL file for the records (rewritten), with ``<stem>.config.json`` beside it (the config, the
            policy, the problems and :func:`drk.provenance.write_provenance`'s stamp).

    Returns:
        One record per (problem, sample, turn), in turn-major order.

    Raises:
        ValueError: invalid settings (before any work), or both ``config`` and keyword settings.
    """
    from drk.rl.rewards import turn_reward

    if config is not None and settings:
        raise ValueError(f"pass either config or its fields as keywords, not both (got {sorted(settings)})")
    cfg = config if config is not None else EvalRunConfig(**settings)
    evaluate = evaluator or default_evaluator(cfg.eval_config, cfg.device)
    episodes = [(problem, sample) for problem in problems for sample in range(cfg.samples)]
    histories: dict[tuple[str, int], list[Turn]] = {(p.key, s): [] for p, s in episodes}
    if out_path is not None:
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        Path(out_path).write_text("")
        write_run_config(out_path, {"policy": policy.describe(), "problems": [p.key for p in problems],
                                    **cfg.to_dict()})
    records: list[EvalRecord] = []
    for turn in range(1, cfg.turns + 1):
        replies = _generate_turn(policy, problems, episodes, histories, turn, cfg)
        # The environment scores the answer part of each reply (reasoning in <think> blocks dropped, as in training).
        results = evaluate([(problem, answer_text(reply)) for (problem, _), reply in zip(episodes, replies, strict=True)])
        new = []
        for (problem, sample), reply, result in zip(episodes, replies, results, strict=True):
            reward = turn_reward(result, use_profiling_ratio=cfg.use_profiling_ratio)
            histories[(problem.key, sample)].append(Turn(turn, reply, result.feedback, reward))
            new.append(EvalRecord.from_result(result, problem=problem.key, level=problem.level, sample=sample,
                                              turn=turn, reward=reward, reply=reply, context=cfg.context,
                                              policy=_policy_label(policy)))
        if out_path is not None:
            append_records(out_path, new)
        records += new
    return records


def _generate_turn(policy, problems, episodes, histories, turn: int, cfg: EvalRunConfig) -> list[str]:
    """Replies of every episode at ``turn``, aligned with ``episodes``."""
    if turn == 1:
        meta = [RequestMeta(p.key, 1, tuple(range(cfg.samples))) for p in problems]
        out = policy.generate([task_messages(p) for p in problems], n=cfg.samples, meta=meta, **cfg.sampling)
        return [reply for replies in out for reply in replies]
    conversations = [build_messages(task_messages(p), histories[(p.key, s)], context=cfg.context, window=cfg.window)
                     for p, s in episodes]
    meta = [RequestMeta(p.key, turn, (s,)) for p, s in episodes]
    return [replies[0] for replies in policy.generate(conversations, n=1, meta=meta, **cfg.sampling)]


def _policy_label(policy) -> str:
    """Short name of the policy for records: its model, else its kind."""
    info = policy.describe()
    return str(info.get("model") or info.get("kind", type(policy).__name__))
