"""Every bundled reference's output must depend on its inputs, beyond the environment's tolerance.

Otherwise a stale output from another input set (or a constant) passes ``allclose`` and correctness means nothing:
on the H200, the original Matmul+LogSumExp problem (4096 outputs averaged into one value per row) gave every row
nearly the same value, so an honest kernel's stale output block passed as the answer of other inputs.
"""

import types

import pytest
import torch

from drk.gym import EvalConfig, load_problems
from drk.gym.correctness import flatten_outputs, make_inputs

PROBLEMS = load_problems("drk:all")
TOL = EvalConfig()


def _reference(problem):
    module = types.ModuleType(f"ref_{problem.level}_{problem.name}")
    exec(compile(problem.source, problem.path or problem.name, "exec"), module.__dict__)
    module.__dict__.update(getattr(module, "CPU_SIZES", {}))
    torch.manual_seed(0)
    return module, module.Model(*module.get_init_inputs()).eval()


@pytest.mark.parametrize("problem", PROBLEMS, ids=[p.key for p in PROBLEMS])
def test_outputs_of_two_input_sets_differ_beyond_tolerance(problem):
    module, model = _reference(problem)
    with torch.no_grad():
        a = flatten_outputs(model(*make_inputs(module, 1, torch.device("cpu"))))
        b = flatten_outputs(model(*make_inputs(module, 2, torch.device("cpu"))))
    for x, y in zip(a, b):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            continue
        differ = 1 - torch.isclose(y.double(), x.double(), atol=TOL.atol, rtol=TOL.rtol).double().mean().item()
        assert differ >= 0.01, f"only {differ:.2%} of outputs differ beyond tolerance between two input sets"
        assert not torch.allclose(torch.zeros_like(x), x, atol=TOL.atol, rtol=TOL.rtol), "zeros pass as the output"
