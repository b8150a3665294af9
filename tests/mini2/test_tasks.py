"""The synthetic problems: deterministic, a fixed split, real drk problems whose outputs depend on their inputs."""

import types

import pytest
import torch

from drk.gym import EvalConfig, Problem
from drk.gym.correctness import flatten_outputs, make_inputs
from drk.mini2.tasks import (
    CPU_DIM,
    CPU_ROWS,
    N_TASKS,
    N_TRAIN,
    all_tasks,
    apply_chain,
    make_task,
    task_by_name,
    tasks,
)

#: Pinned: a change here changes every verdict (bump GENERATOR_VERSION and rebuild the table).
NAMES = [
    "m2_00_GELU_SubMean_Tanh_Bias", "m2_01_ReLU_Softmax_GELU", "m2_02_Bias_Softmax_RowMax", "m2_03_SubMean_Scale_Bias",
    "m2_04_Matmul_Bias_Scale_SiLU_GELU_RowSum", "m2_05_Sigmoid_LayerNorm_Bias", "m2_06_SubMean_SiLU_Tanh",
    "m2_07_SiLU_SubMean_Scale_GELU", "m2_08_Matmul_Sigmoid_Scale_SubMean_Scale", "m2_09_Softmax_Scale_Tanh_Scale",
    "m2_10_Matmul_LayerNorm_SiLU_Scale", "m2_11_Matmul_ReLU_Scale_Bias_SubMean", "m2_12_Tanh_Softmax_SubMean_SiLU",
    "m2_13_SiLU_LayerNorm_SubMax_Bias", "m2_14_Tanh_Bias_RowSum", "m2_15_Tanh_Scale_Softmax_Bias_Tanh",
    "m2_16_GELU_LayerNorm_Scale", "m2_17_Bias_GELU_RowSum", "m2_18_SiLU_Scale_Softmax_Tanh",
    "m2_19_Tanh_Sigmoid_Bias_LayerNorm", "m2_20_SubMax_SiLU_RowSum", "m2_21_LayerNorm_SiLU_GELU",
    "m2_22_ReLU_SubMax_Scale", "m2_23_ReLU_SubMean_Tanh_Bias_Scale", "m2_24_Tanh_Softmax_Bias_SubMean_ReLU",
    "m2_25_SubMax_Sigmoid_SubMax_Scale", "m2_26_Bias_SubMean_Tanh_Bias", "m2_27_Matmul_SubMax_Tanh_Scale_Bias_Scale",
    "m2_28_Tanh_SiLU_SubMean_Bias", "m2_29_SiLU_Scale_SubMean", "m2_30_Sigmoid_LayerNorm_Scale",
    "m2_31_SubMax_Bias_Sigmoid_RowSum", "m2_32_ReLU_Softmax_SubMean", "m2_33_GELU_Bias_SubMean_ReLU",
    "m2_34_LayerNorm_ReLU_LayerNorm_Bias", "m2_35_Scale_SubMean_ReLU_Bias", "m2_36_Softmax_Scale_Bias_ReLU",
    "m2_37_SubMax_SiLU_RowSum",
]
TASKS = all_tasks()
TOL = EvalConfig()


def test_generation_is_deterministic_and_pinned():
    assert [t.name for t in TASKS] == NAMES
    again = [make_task(i) for i in range(N_TASKS)]
    assert again == list(TASKS)
    assert [t.source for t in again] == [t.source for t in TASKS]


def test_fixed_split():
    train, held = tasks("train"), tasks("heldout")
    assert len(train) == N_TRAIN == 30 and len(held) == 8
    assert [t.index for t in held] == list(range(30, 38))
    assert {t.name for t in train}.isdisjoint(t.name for t in held)
    assert task_by_name(held[0].name) is held[0]
    with pytest.raises(ValueError):
        tasks("test")


def test_chains_have_the_shape_the_language_needs():
    for t in TASKS:
        kinds = [op.kind for op in t.ops]
        assert 3 <= len(t.ops) <= 5
        assert "pointwise" in kinds and 1 <= sum(k != "pointwise" for k in kinds) <= 2
        assert "reduce" not in kinds[:-1]  # reductions end the chain
        assert t.ops[t.drop_at].kind == "pointwise"
        assert "reduce" not in kinds[t.swap_at:t.swap_at + 2]
    assert sum(t.matmul for t in TASKS) >= 4  # some problems are dominated by a GEMM left to torch


def _module(task):
    module = types.ModuleType(f"ref_{task.name}")
    exec(compile(task.source, task.name, "exec"), module.__dict__)
    module.__dict__.update(module.CPU_SIZES)
    torch.manual_seed(0)
    return module, module.Model(*module.get_init_inputs()).eval()


@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_problem_loads_and_outputs_depend_on_inputs(task):
    problem = task.problem()
    assert isinstance(problem, Problem) and problem.name == task.name and problem.source == task.source
    module, model = _module(task)
    assert (module.ROWS, module.DIM) == (CPU_ROWS, CPU_DIM)
    # drk's input-sensitivity rule, as tests/problems/test_input_sensitivity.py applies it to the bundled suite
    with torch.no_grad():
        a = flatten_outputs(model(*make_inputs(module, 1, torch.device("cpu"))))
        b = flatten_outputs(model(*make_inputs(module, 2, torch.device("cpu"))))
    for x, y in zip(a, b):
        differ = 1 - torch.isclose(y.double(), x.double(), atol=TOL.atol, rtol=TOL.rtol).double().mean().item()
        assert differ >= 0.01
        assert not torch.allclose(torch.zeros_like(x), x, atol=TOL.atol, rtol=TOL.rtol)
    # the module's forward is the chain the language and the generator's checks reason about
    (x,) = make_inputs(module, 3, torch.device("cpu"))
    params = {name: p.detach() for name, p in model.named_parameters() if name.startswith("b")}
    h = model.linear(x).detach() if task.matmul else x
    with torch.no_grad():
        assert torch.allclose(model(x), apply_chain(list(enumerate(task.ops)), h, params), atol=1e-5, rtol=1e-5)
