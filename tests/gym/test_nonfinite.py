"""Reference outputs with NaN or infinite elements (log of zero, say): an exact kernel is correct, and one whose
infinities are elsewhere is not (an attacker review found every candidate of such a problem judged incorrect at
the timing stage: non-finite checksums were refused)."""

import math

import torch

from drk.gym import EvalConfig, Problem, evaluate, rounds

PROBLEM = '''
import torch
import torch.nn as nn
N = 4096
class Model(nn.Module):
    def forward(self, x):
        return torch.log(torch.relu(x))
def get_inputs():
    return [torch.randn(N)]
def get_init_inputs():
    return []
'''

KERNEL = '''
import torch, torch.nn as nn, triton, triton.language as tl
@triton.jit
def log_relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, {body}, mask=m)
class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        log_relu[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
'''


def test_digests_of_nonfinite_outputs_agree_only_where_they_are_the_same():
    x = torch.tensor([1.0, -math.inf, 2.0, math.nan, 3.0])
    moved = torch.tensor([1.0, 2.0, -math.inf, math.nan, 3.0])  # the same values, -inf elsewhere
    a, b, c = (rounds.digest_values([v], seed=7)[0] for v in (x, x.clone(), moved))
    assert all(isinstance(s, float) and math.isfinite(s) for s in a["sums"])  # strict JSON can carry them
    assert a == b and a["nonfinite"][0] == 1 and a["nonfinite"][4] == 1  # one NaN, one -inf
    assert c["nonfinite"] != a["nonfinite"]
    assert "nonfinite" not in rounds.digest_values([torch.ones(4)], seed=7)[0]  # the common case: no second pass


def test_an_exact_kernel_of_a_problem_with_infinite_outputs_is_correct(tmp_path):
    path = tmp_path / "log_relu.py"
    path.write_text(PROBLEM)
    problem = Problem.from_file(path)
    config = EvalConfig(timeout_s=60)
    exact = evaluate(problem, KERNEL.format(body="tl.log(tl.maximum(x, 0.0))"), device="cpu", config=config)
    assert exact.status == "correct", exact.error
    # finite where the reference is -inf: wrong
    wrong = evaluate(problem, KERNEL.format(body="tl.log(tl.maximum(x, 1e-30))"), device="cpu", config=config)
    assert wrong.status == "incorrect"
