"""The kernel-evaluation environment (our KernelGYM).

``evaluate(problem, candidate_src)`` returns an :class:`EvalResult` with a status from :data:`STATUSES`,
correctness, hacking evidence, timing and the profiling ratio; see ``docs/environment.md``.
"""

from drk.gym.cache import ResultCache, cache_key
from drk.gym.config import EvalConfig
from drk.gym.evaluate import ProblemError, decided_without_judge, evaluate, resolve_device
from drk.gym.extract import extract_code
from drk.gym.gpu_lock import GpuTimingLock
from drk.gym.pool import Pool
from drk.gym.problem import Problem, load_problems
from drk.gym.remote import RemoteEvaluator
from drk.gym.result import STATUSES, EvalResult, results_frame

__all__ = [
    "STATUSES",
    "EvalConfig",
    "EvalResult",
    "GpuTimingLock",
    "Pool",
    "Problem",
    "ProblemError",
    "RemoteEvaluator",
    "ResultCache",
    "cache_key",
    "decided_without_judge",
    "evaluate",
    "extract_code",
    "load_problems",
    "resolve_device",
    "results_frame",
]
