"""Feedback tokens: a real evaluation condensed into four tokens for the next turn (issue 12, item 3).

``[status, speedup bucket, PR bucket, top kernel]``, e.g. ``["S:correct", "SPD:1.25-2", "PR:>=0.95",
"TOP:own:softmax"]`` or ``["S:hacked", "SPD:0.8-1", "PR:<0.25", "TOP:torch:softmax"]``. They carry what multi-turn
refinement needs and nothing that names the answer: whether it passed, whether it is fast, whether Triton does the
work, and which op dominates the time (the policy's own kernel, or torch's: a GEMM it cannot move, a softmax it
left in torch). Missing measurements (CPU interpreter, an early failure) are the ``NA`` tokens.

Input: a :class:`drk.gym.EvalResult`, a :class:`drk.mini2.verdicts.Verdict`, or a dict with the same fields.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from drk.mini2.tasks import ALL_OPS, POINTWISE

STATUSES: tuple[str, ...] = ("format_error", "compile_error", "runtime_error", "timeout", "incorrect", "hacked",
                             "correct")
#: Bucket edges (lower edges of the upper buckets): speedup over the eager reference, and PR in [0, 1].
SPEEDUP_EDGES: tuple[float, ...] = (0.5, 0.8, 1.0, 1.25, 2.0, 3.0)
PR_EDGES: tuple[float, ...] = (0.25, 0.5, 0.75, 0.95)
TOP_KINDS: tuple[str, ...] = ("gemm", "softmax", "layernorm", "sub_mean", "sub_max", "reduce", "pointwise", "other")

_TORCH_PATTERNS: tuple[tuple[str, re.Pattern], ...] = (
    ("gemm", re.compile(r"gemm|cutlass|cublas|xmma|wgmma|matmul|sm\d+_", re.I)),
    ("softmax", re.compile(r"softmax", re.I)),
    ("layernorm", re.compile(r"layer_?norm", re.I)),
    ("reduce", re.compile(r"reduce|reduction", re.I)),
    ("pointwise", re.compile(r"elementwise|vectorized|pointwise|unrolled", re.I)),
)


def _fmt(x: float) -> str:
    return f"{x:g}"


def bucket_labels(prefix: str, edges: Sequence[float]) -> list[str]:
    labels = [f"{prefix}:<{_fmt(edges[0])}"]
    labels += [f"{prefix}:{_fmt(a)}-{_fmt(b)}" for a, b in zip(edges, edges[1:])]
    return labels + [f"{prefix}:>={_fmt(edges[-1])}", f"{prefix}:NA"]


def bucket(prefix: str, edges: Sequence[float], value: float | None) -> str:
    labels = bucket_labels(prefix, edges)
    if value is None or value != value:  # None or NaN
        return labels[-1]
    return labels[sum(value >= e for e in edges)]


def top_kinds() -> list[str]:
    return [f"TOP:{who}:{kind}" for who in ("own", "torch") for kind in TOP_KINDS] + ["TOP:NA"]


#: Every feedback token (for the policy's vocabulary).
FEEDBACK_TOKENS: tuple[str, ...] = tuple(
    [f"S:{s}" for s in STATUSES] + bucket_labels("SPD", SPEEDUP_EDGES) + bucket_labels("PR", PR_EDGES) + top_kinds())


def own_kernel_kind(name: str) -> str:
    """The dominant op of one of our rendered kernels (``k{i}_{op}_{op}...``): its first row op, else pointwise."""
    ops = [op for op in sorted(ALL_OPS, key=len, reverse=True) if op in name]
    rows = [op for op in ops if op not in POINTWISE]
    if rows:
        first = min(rows, key=name.index)
        return "reduce" if first in ("rsum", "rmax") else first
    return "pointwise" if ops else "other"


def torch_kernel_kind(name: str) -> str:
    for kind, pattern in _TORCH_PATTERNS:
        if pattern.search(name):
            return kind
    return "other"


def top_token(name: str | None, own: bool | None) -> str:
    if not name:
        return "TOP:NA"
    if own:
        return f"TOP:own:{own_kernel_kind(name)}"
    return f"TOP:torch:{torch_kernel_kind(name)}"


def _get(result: Any, field: str, default: Any = None) -> Any:
    return result.get(field, default) if isinstance(result, dict) else getattr(result, field, default)


def feedback_tokens(result: Any) -> list[str]:
    """Four tokens from an ``EvalResult``, a ``Verdict`` or a dict (``status``, ``speedup``, ``coverage``, and
    ``profile`` or ``top_kernel``/``top_own``)."""
    status = _get(result, "status")
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}")
    name, own = _get(result, "top_kernel"), _get(result, "top_own")
    profile = _get(result, "profile") or []
    if not name and profile:
        name, own = profile[0].get("name"), profile[0].get("own")
    return [f"S:{status}", bucket("SPD", SPEEDUP_EDGES, _get(result, "speedup")),
            bucket("PR", PR_EDGES, _get(result, "coverage")), top_token(name, own)]
