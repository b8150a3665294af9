import re

import pytest

from drk.gym import EvalResult, Problem

REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(8, 8)]


def get_init_inputs():
    return []
'''


@pytest.fixture
def problems():
    return [Problem.from_source(REFERENCE, name=f"0{i}_Toy", level=1, problem_id=i) for i in (1, 2)]


def fake_result(reply: str) -> EvalResult:
    """A verdict read off the reply (the environment is not under test): 'GOOD x1.5' is correct with speedup
    1.5, 'GOOD' correct with no timing (as on CPU), 'HACK' hacked, anything else incorrect."""
    common = dict(problem="toy", feedback=f"verdict on: {reply}", device="fake", timing_backend="fake")
    if "GOOD" in reply:
        match = re.search(r" x(\d+(?:\.\d+)?)", reply)
        speedup = float(match.group(1)) if match else None
        return EvalResult(status="correct", correct=True, speedup=speedup, coverage=0.9 if speedup else None,
                          **common)
    if "HACK" in reply:
        return EvalResult(status="hacked", hacked=True, hack_reasons=["decoy"], **common)
    return EvalResult(status="incorrect", **common)


@pytest.fixture
def fake_evaluator():
    calls = []

    def evaluate(pairs):
        calls.append(pairs)
        return [fake_result(reply) for _, reply in pairs]

    evaluate.calls = calls
    return evaluate
