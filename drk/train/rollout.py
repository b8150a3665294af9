"""Multi-turn episodes: generate a reply, evaluate it, feed the feedback back, up to T turns.

Each trajectory becomes ONE token row ``prompt | reply_1 | feedback_1 | reply_2 | ...``: the generation
context of turn t is exactly the row's prefix before ``reply_t``, so scoring the row once gives every turn's
log-probs. ``env_mask`` is 1 on reply tokens and 0 on feedback tokens (which therefore never receive loss), and
each turn records its token span so the trainer can give it its own turn-level advantage. This module knows
nothing of TRL: the generation backend and the environment are injected callables.

- ``generate(contexts) -> (completion_ids, logprobs)``: one reply per context (lists of token ids); ``logprobs``
  are the sampler's per-token log-probs (None if unknown).
- ``env(problems, replies) -> results``: one evaluation result per reply (an ``EvalResult`` or a dict with
  ``status``, ``correct``, ``hacked``, ``speedup``, ``coverage``, ``feedback``), in order.

Evaluation of one generation chunk runs in a background thread while the next chunk is generated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from drk.chat import PromptFormat, answer_text

GenerateFn = Callable[[list[list[int]]], tuple[list[list[int]], list[list[float]] | None]]
EnvFn = Callable[[list[Any], list[str]], list[Any]]


@dataclass
class Turn:
    """One turn of a trajectory: the reply, where its tokens sit in the row, and its evaluation."""

    turn: int  # 1-based
    reply: str
    start: int  # reply tokens are completion_ids[start:end]
    end: int
    result: dict[str, Any]  # EvalResult.to_dict()
    scripted: bool = False  # replayed from a file, not sampled


@dataclass
class Trajectory:
    """A growing episode: one training row (prompt + completion) plus its turns."""

    prompt_id: Any  # group key: rollouts of one problem share it
    traj_id: int  # unique within the batch
    problem: Any
    prompt_ids: list[int]
    scripted: dict[int, str] = field(default_factory=dict)  # turn -> reply to replay
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)  # 1 reply token, 0 feedback token
    logprobs: list[float] = field(default_factory=list)  # sampler log-probs; NaN unknown; 0 on feedback
    turns: list[Turn] = field(default_factory=list)
    done: bool = False

    @property
    def context(self) -> list[int]:
        return self.prompt_ids + self.completion_ids


@dataclass(frozen=True)
class EpisodeSettings:
    """Episode limits (see :class:`drk.train.config.RLConfig` for the meaning of each)."""

    max_turns: int = 3
    max_reply_tokens: int = 8192
    max_context_tokens: int = 32768
    stop_on_correct: bool = False
    chunk_size: int | None = None


def run_episodes(trajs: list[Trajectory], *, generate: GenerateFn, env: EnvFn, fmt: PromptFormat,
                 settings: EpisodeSettings) -> list[Trajectory]:
    """Play every trajectory to its end, in place; returns ``trajs``.

    An episode ends after ``max_turns`` turns, when the next turn would not fit in ``max_context_tokens``, or
    (with ``stop_on_correct``) after its first correct turn, so later turns have fewer samples (N_t shrinks).
    """
    eos_id = _eos_id(fmt.tokenizer)
    too_long = [tr for tr in trajs if len(tr.prompt_ids) + settings.max_reply_tokens > settings.max_context_tokens]
    if too_long:
        raise ValueError(
            f"problem {getattr(too_long[0].problem, 'name', '?')!r}: prompt ({len(too_long[0].prompt_ids)} tokens) "
            f"+ max_reply_tokens ({settings.max_reply_tokens}) exceeds max_context_tokens "
            f"({settings.max_context_tokens}); raise max_context_tokens or drop the problem")
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="drk-env") as pool:
        for t in range(1, settings.max_turns + 1):
            active = [tr for tr in trajs if not tr.done]
            if not active:
                break
            futures = []
            for chunk in _chunks(active, settings.chunk_size):
                _reply(chunk, t, generate, fmt, eos_id)
                futures.append(_submit_eval(pool, env, chunk))
            for chunk, fut in zip(_chunks(active, settings.chunk_size), futures, strict=True):
                _record(chunk, t, fut.result(), fmt, settings)
    return trajs


def _reply(chunk: list[Trajectory], t: int, generate: GenerateFn, fmt: PromptFormat, eos_id: int | None) -> None:
    """Append turn t's reply tokens (sampled, or replayed when scripted) to each trajectory of the chunk."""
    sampled = [tr for tr in chunk if t not in tr.scripted]
    if sampled:
        ids, logps = generate([tr.context for tr in sampled])
        if len(ids) != len(sampled):
            raise RuntimeError(f"generate returned {len(ids)} replies for {len(sampled)} contexts")
        for i, tr in enumerate(sampled):
            lp = list(logps[i]) if logps is not None and logps[i] is not None else [math.nan] * len(ids[i])
            _append_reply(tr, t, list(ids[i]), lp, fmt, scripted=False)
    for tr in chunk:
        if t in tr.scripted:
            ids = fmt._encode(tr.scripted[t]) + ([eos_id] if eos_id is not None else [])
            _append_reply(tr, t, ids, [math.nan] * len(ids), fmt, scripted=True)


def _append_reply(tr: Trajectory, t: int, ids: list[int], logps: list[float], fmt: PromptFormat,
                  *, scripted: bool) -> None:
    if len(logps) != len(ids):
        raise RuntimeError(f"{len(logps)} log-probs for {len(ids)} generated tokens")
    start = len(tr.completion_ids)
    tr.completion_ids += ids
    tr.env_mask += [1] * len(ids)
    tr.logprobs += [float("nan") if x is None else float(x) for x in logps]
    reply = fmt.tokenizer.decode(ids, skip_special_tokens=True)
    tr.turns.append(Turn(turn=t, reply=reply, start=start, end=len(tr.completion_ids), result={},
                         scripted=scripted))


def _submit_eval(pool: ThreadPoolExecutor, env: EnvFn, chunk: list[Trajectory]) -> Future:
    problems = [tr.problem for tr in chunk]
    answers = [answer_text(tr.turns[-1].reply) for tr in chunk]
    return pool.submit(env, problems, answers)


def _record(chunk: list[Trajectory], t: int, results: Sequence[Any], fmt: PromptFormat,
            settings: EpisodeSettings) -> None:
    """Store results; end finished episodes; append the feedback turn to the others."""
    if len(results) != len(chunk):
        raise RuntimeError(f"env returned {len(results)} results for {len(chunk)} replies")
    for tr, res in zip(chunk, results, strict=True):
        result = result_dict(res)
        tr.turns[-1].result = result
        if t >= settings.max_turns or (settings.stop_on_correct and result.get("correct")):
            tr.done = True
            continue
        fb = fmt.feedback_ids(result.get("feedback") or "", reply_ids=tr.completion_ids[tr.turns[-1].start:])
        if len(tr.context) + len(fb) + settings.max_reply_tokens > settings.max_context_tokens:
            tr.done = True  # the next turn would not fit: the episode ends here
            continue
        tr.completion_ids += fb
        tr.env_mask += [0] * len(fb)
        tr.logprobs += [0.0] * len(fb)


def result_dict(result: Any) -> dict[str, Any]:
    """An evaluation result as a plain dict (``EvalResult.to_dict()``, a dict, or a dataclass-like object)."""
    if isinstance(result, dict):
        return dict(result)
    if hasattr(result, "to_dict"):
        return result.to_dict()
    return dict(vars(result))


def _chunks(items: list, size: int | None) -> list[list]:
    size = size or len(items) or 1
    return [items[i:i + size] for i in range(0, len(items), size)]


def _eos_id(tokenizer: Any) -> int | None:
    return tokenizer.eos_token_id if getattr(tokenizer, "eos_token_id", None) is not None else None
