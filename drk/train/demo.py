"""A small training run from a few knobs (notebook 03, ``drk.reproduce``): the values it derives live here.

A notebook sets what a reader would change (model, estimator, turns, steps, group size, ...); this module turns
them into a full :class:`~drk.train.config.RLConfig`: one problem group per step, one micro-batch per group, room
in the context for a few turns, and a scripted rollout per problem that replays the bundled solution (so an
untrained model still gets a reward-bearing sample).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drk.train.config import RLConfig

#: ``quick``'s caps: problems, rollouts per problem, turns and steps of a CI-sized run.
QUICK_CAPS: dict[str, int] = {"num_problems": 2, "rollouts_per_prompt": 2, "turns": 2, "steps": 2}


def demo_config(*, model: str = "tiny", lora: bool = True, estimator: str = "trloo", turns: int = 2,
                steps: int = 2, problems: str = "drk:level1", num_problems: int = 2, rollouts_per_prompt: int = 2,
                max_reply_tokens: int = 16, learning_rate: float = 1e-4, rollout: str = "hf", scripted: bool = True,
                device: str = "cpu", quick: bool = True, out_dir: str | Path = "runs", method: str = "trloo",
                overrides: dict[str, Any] | None = None) -> RLConfig:
    """The run's config, written under ``<out_dir>/train/<method>`` (the layout ``drk.figures.build`` reads).

    Derived: ``prompts_per_step = num_problems`` (every problem each step), ``micro_batch_size =
    rollouts_per_prompt`` (one group per micro-batch), ``max_context_tokens = max(2048, 4 * max_reply_tokens)``,
    and with ``scripted`` one rollout per problem replaying its bundled solution (written to
    ``<run>/scripted.jsonl``). ``quick`` caps the sizes at :data:`QUICK_CAPS` (rollouts set to 2).
    ``overrides`` are further ``RLConfig`` fields, applied last.
    """
    from drk.gym import load_problems
    from drk.train.api import write_scripted_solutions

    if quick:
        steps, num_problems, turns = (min(steps, QUICK_CAPS["steps"]), min(num_problems, QUICK_CAPS["num_problems"]),
                                      min(turns, QUICK_CAPS["turns"]))
        rollouts_per_prompt = QUICK_CAPS["rollouts_per_prompt"]
    run_dir = Path(out_dir) / "train" / method
    script = None
    if scripted:
        script = write_scripted_solutions(load_problems(problems)[:num_problems], run_dir / "scripted.jsonl")
    return RLConfig(
        model=model, lora=lora, estimator=estimator, max_turns=turns, steps=steps, problems=problems,
        num_problems=num_problems, prompts_per_step=num_problems, rollouts_per_prompt=rollouts_per_prompt,
        micro_batch_size=rollouts_per_prompt, max_reply_tokens=max_reply_tokens,
        max_context_tokens=max(2048, 4 * max_reply_tokens), learning_rate=learning_rate, rollout=rollout,
        scripted_replies=str(script) if script else None, scripted_rollouts_per_prompt=1 if scripted else 0,
        device=device, out_dir=str(run_dir), **(overrides or {}),
    )
