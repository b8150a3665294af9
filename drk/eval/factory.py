"""Which policy a notebook or script asks for by name: ``"replay"``, ``"hf"`` or ``"openai"`` (notebook 04).

Each kind comes back with the label its records and figures carry (the table row name in ``eval/<label>.jsonl``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from drk.eval.policies import HFPolicy, OpenAIPolicy, Policy
from drk.eval.replay import ReplayPolicy, solution_replies

#: Policy kinds :func:`make_policy` builds.
POLICY_KINDS: tuple[str, ...] = ("replay", "hf", "openai")

#: The label of the default replay policy (the bundled solutions).
SOLUTIONS_LABEL = "bundled-solutions-replay"


def make_policy(kind: str, *, model: str | None = None, adapter: str | None = None, device: str = "auto",
                base_url: str = "http://localhost:8000/v1", api_key_env: str = "OPENAI_API_KEY",
                replay_path: str | Path | None = None, problems: Sequence[Any] = (), samples: int = 1,
                turns: int = 1) -> tuple[Policy, str]:
    """A policy of ``kind`` and its label.

    Args:
        kind: ``"replay"`` (stored replies: ``replay_path``, else the bundled solutions of ``problems`` for
            ``samples`` episodes of ``turns`` turns, with :func:`~drk.eval.replay.solution_replies`' wrong first
            turns), ``"hf"`` (a local model ``model`` with an optional LoRA ``adapter`` on ``device``) or
            ``"openai"`` (the served ``model`` at ``base_url``).

    Returns:
        ``(policy, label)``: the label is the replay file's stem or :data:`SOLUTIONS_LABEL`, the adapter's or
        model's folder name, or the served model name.

    Raises:
        ValueError: an unknown kind, or a model-backed kind without ``model``.
    """
    if kind not in POLICY_KINDS:
        raise ValueError(f"policy kind={kind!r}: choose one of {POLICY_KINDS}")
    if kind == "replay":
        if replay_path is not None:
            return ReplayPolicy(replay_path), Path(replay_path).stem
        return ReplayPolicy(solution_replies(problems, samples=samples, turns=turns)), SOLUTIONS_LABEL
    if not model:
        raise ValueError(f"policy kind {kind!r} needs model (a model id or directory, or the served model's name)")
    if kind == "hf":
        return HFPolicy(model, adapter=adapter, device=device), Path(adapter or model).name
    return OpenAIPolicy(model, base_url=base_url, api_key_env=api_key_env), model
