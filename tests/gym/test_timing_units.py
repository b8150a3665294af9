"""The timer's summaries (pure) and the CPU timer; the CUDA path is covered by tests/gym/test_gpu.py."""

import pytest
import torch

from drk.gym.timing import _iqr, _summarise, time_pair_cpu


def test_drk_policy_takes_medians_and_iqr():
    t = _summarise({"ref": [1.0, 2.0, 3.0, 4.0, 100.0], "cand": [0.5, 0.5, 0.6, 0.7, 50.0]}, "drk",
                   "cuda_events")
    assert t.ref_ms == 3.0 and t.kernel_ms == 0.6  # one preempted call does not move a median
    assert t.backend == "cuda_events:median_l2flush"
    assert t.ref_ms_iqr == pytest.approx(_iqr([1.0, 2.0, 3.0, 4.0, 100.0]))


def test_authors_policy_takes_means():
    t = _summarise({"ref": [1.0, 2.0, 3.0, 4.0, 100.0], "cand": [1.0, 1.0, 1.0, 1.0, 1.0]}, "authors",
                   "cuda_events+device_sync")
    assert t.ref_ms == 22.0 and t.backend == "cuda_events+device_sync:mean_noflush"


def test_iqr_small_samples():
    assert _iqr([]) == 0.0 and _iqr([2.0, 5.0]) == 3.0


def test_cpu_timer_times_both_models():
    slow = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(8)])
    fast = torch.nn.Identity()
    t = time_pair_cpu(slow, fast, [torch.randn(256, 64)], trials=3)
    assert t.backend == "cpu_interpreter_wall" and len(t.ref_samples) == len(t.kernel_samples) == 3
    assert t.ref_ms > t.kernel_ms > 0
