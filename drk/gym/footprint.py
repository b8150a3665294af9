"""A problem's GPU footprint before any evaluation of it: its sizes read off on PyTorch's ``meta`` device.

A :class:`drk.gym.Pool` admits evaluations to a GPU by the memory they are expected to need
(:class:`drk.gym.pool.MemoryGate`). It learns that per problem from its judges' peaks, but only once an evaluation
of the problem has finished; before, it had to guess. Guessing low started eight unseen 512 MB level-1 problems at
once (four ran out of memory, 2026-12-02); waiting for the first evaluation of each problem to finish
(``FIRST_SIGHT_WAIT_S``) serialised a pass's start and, when that wait ran out, started evaluations at an unknown
size anyway (on an H200, 2026-12-03: four ran out of memory and were retried alone one after another, 33-136 s
each).

Here the sizes are read instead of guessed: the problem's ``Model`` is built and called on its ``get_inputs()``
under ``torch.device("meta")``, where tensors have shapes and dtypes but no storage, so nothing is computed and
nothing is allocated. A call's bytes (inputs, outputs, parameters and buffers) then give the judge's expected peak
(:func:`judge_peak_bytes`). It runs in a child process of its own (no GPU visible), never the caller's: problem code
is trusted but is only ever executed away from the caller (:class:`drk.gym.problem.Problem`). A problem it cannot
read (a forward with no meta kernel, data-dependent shapes, a ``get_inputs`` that picks a device itself) gets no
estimate, and the pool falls back to learning.

    python -m drk.gym.footprint drk/problems/level1/*.py     # a call's bytes per problem, as the pool sees them
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence

#: A judge's GPU peak (torch's reserved memory) beyond :data:`JUDGE_BASE_BYTES`, as a multiple of a call's bytes.
#: Measured on an H200 after the probes' near-zero check was chunked (2026-12-04, ``results/gpu/2026-12-04-s29``,
#: ``call3_suite_level1.log``, ``judge_peak_mb`` against the sizes this module reads): 2.4 for the level-1
#: elementwise problems (3460 MB, calls of 1024 MB), 2.3 for Add, 3.8 for the dim reductions, 4.4 for Matmul and
#: Linear, 5.0 for Argmax/Max/MinDim (3586 MB, 512 MB); it was 7.7 for the elementwise ones before. The largest,
#: with a margin: an estimate only stands until the problem's first judge reports.
JUDGE_PEAK_PER_CALL_BYTE = 5.5
#: What a judge holds whatever the problem (the 512 MB L2 flush buffer of ``EvalConfig.l2_flush_mb``, the digest
#: weights' cache, the allocator's slack), in bytes.
JUDGE_BASE_BYTES = 1 << 30
#: Seconds the child may take for a whole batch of problems (a problem's module that hangs at import).
ESTIMATE_TIMEOUT_S = 120.0


def judge_peak_bytes(call_bytes: int) -> int:
    """The GPU memory a judge of a problem whose call holds ``call_bytes`` is expected to reach (torch reserved)."""
    return int(JUDGE_PEAK_PER_CALL_BYTE * call_bytes) + JUDGE_BASE_BYTES


def call_bytes(sources: Sequence[str], timeout_s: float = ESTIMATE_TIMEOUT_S) -> list[int | None]:
    """Per problem source, the bytes one call holds on the meta device (inputs, outputs, parameters, buffers), or
    None where it cannot be read. One child process for the batch; never raises (a child that fails or hangs gives
    None for every problem: the pool then learns sizes the old way)."""
    if not sources:
        return []
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONUNBUFFERED": "1"}
    try:
        done = subprocess.run([sys.executable, "-m", "drk.gym.footprint", "--stdin"], input=json.dumps(list(sources)),
                              capture_output=True, text=True, timeout=timeout_s, env=env, check=False)
        sizes = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (subprocess.SubprocessError, OSError, ValueError, IndexError):
        sizes = None
    if not isinstance(sizes, list) or len(sizes) != len(sources):
        return [None] * len(sources)
    return [s if isinstance(s, int) and not isinstance(s, bool) and s >= 0 else None for s in sizes]


def read_call_bytes(source: str) -> int | None:
    """In this process: the bytes of one call of the problem ``source`` on the meta device, or None. Executes the
    problem's code (the child of :func:`call_bytes` does this; so do tests)."""
    import torch

    from drk.gym import rounds
    from drk.gym.config import EvalConfig
    from drk.gym.judge import _module_and_model

    if "cuda" in source:  # a problem that moves tensors to a device itself would allocate there: not read
        return None
    meta = torch.device("meta")
    try:  # built as a judge builds its reference, on the meta device: GPU sizes, nothing allocated
        module, model = _module_and_model(source, "problem.py", "footprint", EvalConfig(), meta)
        inputs = rounds.make_inputs(module, rounds.CallSpec(0), meta)
        outputs = rounds.call_model(model, inputs, "eval")
    except Exception:  # noqa: BLE001 - no meta kernel, data-dependent shapes, a broken module: no estimate
        return None
    values = [*inputs, *outputs, *model.parameters(), *model.buffers()]
    if any(isinstance(v, torch.Tensor) and v.device.type != "meta" for v in values):
        return None
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--stdin"]:
        print(json.dumps([read_call_bytes(s) for s in json.load(sys.stdin)]))
        return 0
    for path in argv:
        with open(path) as f:
            size = read_call_bytes(f.read())
        shown = "unknown" if size is None else f"{size / 2**20:.1f} MB per call, judge ~{judge_peak_bytes(size) / 2**20:.0f} MB"
        print(f"{path}: {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
