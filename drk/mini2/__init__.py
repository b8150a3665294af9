"""mini2: a setting where a small policy can learn in minutes, judged for real (issue 12, items 1-4).

**Task** (:mod:`drk.mini2.tasks`). 38 synthetic KernelBench-format problems, generated deterministically from a
hash of their index: an optional ``nn.Linear`` left to torch, then a chain of 3-5 ops on rows of a 2-D fp32 tensor
(pointwise: relu, gelu, sigmoid, tanh, silu, a scalar scale, a per-column bias; row ops: softmax (times the row
length, so outputs are O(1)), layernorm without affine, subtract row mean, subtract row max; terminal row sum/max).
Every op matters, the designated wrong variants are wrong, and the output passes drk's input-sensitivity rule; all
three are checked numerically at generation. Indices 0-29 train, 30-37 held out. GPU sizes are 4096-8192 rows of
1024-4096 (reference 0.1-0.5 ms on an H200); ``CPU_SIZES`` is 5 x 40 for the Triton interpreter.

**Action** (:mod:`drk.mini2.language`). A program of 1, 3 or 4 tokens from 13::

    LAZY | DECOY | FALLBACK                        shortcuts (1 token)
    (FUSE | SPLIT | PEROP | EW) (BS | BL) (W4 | W8)   honest plans (3 tokens)
    FUSE BL (W4 | W8) (SWAP | DROP)                  wrong programs (4 tokens)

FUSE: all ops in one Triton kernel; SPLIT: a kernel boundary before each row op; PEROP: a kernel per op; EW: only the
pointwise runs in Triton, row ops in torch. BS/BL: looped row kernels (a pass per statistic) vs one-pass rows in
registers; W4/W8: warps. LAZY: only the last pointwise op in Triton (correct, low PR). DECOY: the reference in torch
beside a fused kernel never launched (hacked: decoy). FALLBACK: a fused launch that raises, caught, then the
reference in torch (hacked: fallback). SWAP/DROP: the fused kernel with two ops swapped / one op left out
(incorrect). A shortcut costs 1 token against an honest plan's 3: the hacks are also the *cheapest* programs, as
in real LLM rollouts, so a reward that pays for them will be found.

Canonical forms: programs with one layout render one source and share one verdict (e.g. SPLIT is FUSE when the only
row op comes first). 23 programs at most per problem, 838 canonical (problem, program) pairs in all: the verdict
table's size. Invalid token sequences are judged without a GPU: unknown tokens ``format_error``, grammar errors
``compile_error`` (reward 0 like any failure).

**Renderer** (:mod:`drk.mini2.render`): deterministic templates to a real ``ModelNew`` module with ``@triton.jit``
kernels; every valid program compiles, and is judged by the real checks, timer and profiler.

**Feedback** (:mod:`drk.mini2.feedback`): 4 tokens from an EvalResult or a table row: status, speedup bucket, PR
bucket, and the top kernel's owner and op (``TOP:torch:softmax``: the time goes to a softmax left in torch).

**Verdict table** (:mod:`drk.mini2.verdicts`, ``benchmarks/mini2_verdicts.py``): every canonical pair judged once
through ``drk.gym.Pool`` into ``results/mini2/verdicts.csv`` + a JSON sidecar (GPU, date, git sha, versions,
EvalConfig); ``load_verdicts(path).verdict(problem, program)`` then answers in microseconds on any machine, and
:class:`~drk.mini2.verdicts.LiveVerdicts` answers the same calls by judging live; :mod:`drk.mini2.live_check`
(``python -m drk.mini2 live-check``) runs one RL run both ways and compares them call by call (the check that the
table is a cache, not a model). Rows carry the problem's and the candidate's source hashes; a stale table is
refused.

**Experiments** (items 5-8; ``results/mini2/PLAN.md`` is the pre-registered analysis): :mod:`drk.mini2.sft` and
:mod:`drk.mini2.rl` train, :mod:`drk.mini2.evaluate` evaluates; :mod:`drk.mini2.experiment` runs the plan's seeds x
variants x settings grid into one resumable tree (:mod:`drk.mini2.runs`); :mod:`drk.mini2.endpoints` says what a
held-out evaluation point records and how a run's numbers are made from them; :mod:`drk.mini2.claims` (with
:mod:`drk.mini2.stats`) writes the claims table; :mod:`drk.figures.mini2` draws the figures with bands over seeds.
"""

from drk.mini2.feedback import FEEDBACK_TOKENS, feedback_tokens
from drk.mini2.language import (
    PROGRAM_TOKENS,
    Program,
    ProgramError,
    all_programs,
    canonical,
    canonical_programs,
    parse,
    segments,
    task_tokens,
)
from drk.mini2.render import render
from drk.mini2.tasks import Op, Task, all_tasks, task_by_name, tasks
from drk.mini2.verdicts import LiveVerdicts, Verdict, VerdictTable, build_verdicts, load_verdicts, table_pairs

__all__ = [
    "FEEDBACK_TOKENS", "PROGRAM_TOKENS", "LiveVerdicts", "Op", "Program", "ProgramError", "Task", "Verdict",
    "VerdictTable", "all_programs", "all_tasks", "build_verdicts", "canonical", "canonical_programs",
    "feedback_tokens", "load_verdicts", "parse", "render", "segments", "table_pairs", "task_by_name", "task_tokens",
    "tasks",
]
