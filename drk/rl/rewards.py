"""Turn rewards from evaluation results (paper Eq. 1 and Eq. 8).

``R = scale * (C + C * min(speedup, cap) + C * PR)`` with ``C = 1`` iff the candidate is correct and not
hacked, and the ``PR`` (profiling ratio) term only under Eq. 8. The paper's own code uses ``scale = 0.5``.

The result may be a :class:`drk.gym.EvalResult` or any object or dict with the fields ``correct`` (correct
and not hacked), ``hacked``, ``speedup`` and ``coverage``; ``drk.gym`` is never imported here. On a CPU-only
machine ``speedup`` and ``coverage`` are None (the Triton interpreter gives no GPU timing or profile): the
missing terms then count 0, so a correct CPU turn scores ``scale * 1``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np


def turn_reward(
    result: Any,
    *,
    use_profiling_ratio: bool = False,
    speedup_cap: float | None = 3.0,
    scale: float = 1.0,
) -> float:
    """Reward of one evaluated turn (Eq. 1, or Eq. 8 with ``use_profiling_ratio``).

    Args:
        result: an ``EvalResult`` or object/dict with ``correct``, ``hacked``, ``speedup``, ``coverage``.
        use_profiling_ratio: add the ``C * PR`` term of Eq. 8 (PR = ``coverage``, in [0, 1]).
        speedup_cap: upper bound on the speedup term (the paper's 3); None for no cap.
        scale: multiplies the whole reward (the authors' code uses 0.5).

    Returns:
        The reward, a float >= 0. Hacked or incorrect turns score exactly 0.

    Raises:
        ValueError: if a correct result carries a NaN/negative speedup or a coverage outside [0, 1]; those
            are evaluation bugs, not candidate failures.

    >>> turn_reward({"correct": True, "hacked": False, "speedup": 2.0, "coverage": 0.5})
    3.0
    >>> turn_reward({"correct": True, "hacked": False, "speedup": 5.0, "coverage": 0.5},
    ...             use_profiling_ratio=True, scale=0.5)
    2.25
    >>> turn_reward({"correct": True, "hacked": True, "speedup": 2.0, "coverage": 0.9})
    0.0
    >>> turn_reward({"correct": True, "hacked": False, "speedup": None, "coverage": None})
    1.0
    """
    if speedup_cap is not None and speedup_cap < 0:
        raise ValueError(f"speedup_cap={speedup_cap}: must be >= 0, or None for no cap")
    correct = bool(_field(result, "correct", False)) and not bool(_field(result, "hacked", False))
    if not correct:
        return 0.0
    speedup = _checked(_field(result, "speedup", None), "speedup", upper=None)
    if speedup_cap is not None:
        speedup = min(speedup, speedup_cap)
    reward = 1.0 + speedup
    if use_profiling_ratio:
        reward += _checked(_field(result, "coverage", None), "coverage", upper=1.0)
    return float(scale * reward)


def turn_rewards(results: Iterable[Any], **kwargs: Any) -> np.ndarray:
    """:func:`turn_reward` of each result, as a float64 array of shape (n,); same keyword arguments."""
    return np.array([turn_reward(r, **kwargs) for r in results], dtype=float)


def _field(result: Any, name: str, default: Any) -> Any:
    """Read ``name`` from a dict or an attribute-bearing object."""
    if isinstance(result, dict):
        return result.get(name, default)
    return getattr(result, name, default)


def _checked(value: Any, name: str, upper: float | None) -> float:
    """None -> 0 (no GPU measurement); otherwise a finite-or-+inf number in [0, upper]."""
    if value is None:
        return 0.0
    x = float(value)
    if math.isnan(x) or x < 0 or (upper is not None and x > upper):
        bound = f"[0, {upper}]" if upper is not None else ">= 0"
        raise ValueError(f"{name}={value!r} on a correct result: must be {bound} or None (not measured)")
    return x
