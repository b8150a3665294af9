"""Every call's inputs keep the layout ``get_inputs()`` gives them, and never alias the problem's own tensors
(attacker review 23, F3-F4; custom problems only, no bundled one has such inputs).

F3: the second correctness round refills the first round's input tensors in place; a module-level tensor that
``get_inputs()`` returned each time was written through (an honest kernel then ``incorrect``), and an expanded input
or a leaf that requires grad could not be written in place (``runtime_error``). F4: a hidden set's inputs came back
contiguous, at storage offset 0 and with a ``grad_fn`` where the seeded calls' were sliced, expanded or grad-requiring
leaves: a free tell of which calls are checked on hidden sets.
"""

import types

import pytest
import torch

from drk.examples import example_candidate
from drk.gym import EvalConfig, Problem, evaluate, rounds
from drk.gym.rounds import CallSpec
from drk.gym.runner import _refill

CACHED = torch.randn(64, 64)

LAYOUTS = {
    "contiguous": lambda: [torch.randn(64, 64)],
    "transposed": lambda: [torch.randn(64, 64).t()],
    "sliced": lambda: [torch.randn(64, 128)[:, 64:]],
    "expanded": lambda: [torch.randn(1, 64).expand(64, 64)],
    "channels_last": lambda: [torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last)],
    "requires_grad": lambda: [torch.randn(64, 64, requires_grad=True)],
    "cached": lambda: [CACHED],
    "integers": lambda: [torch.randint(-100, 100, (8, 16), dtype=torch.int32).t()],
    "zero_dim": lambda: [torch.tensor(3.0)],
    "empty": lambda: [torch.empty(0, 4)],
}

#: A seeded call and each kind of hidden set (scaled, shifted, sign-flipped, sparse), integers perturbed too.
SPECS = [CallSpec(11), CallSpec(12, "eval", 4.0, 0.0, ints=True, int_draw=(0.3, 0.7)),
         CallSpec(13, "eval", 0.5, 1.0, ints=True, int_draw=(0.1, 0.2)),
         CallSpec(15, "eval", -2.0, 0.0, ints=True, int_draw=(0.9, 0.1)),
         CallSpec(14, "eval", 16.0, 0.0, ints=True, int_draw=(0.5, 0.5), sparse=1e-2)]


def _layout(x: torch.Tensor) -> tuple:
    return (x.shape, x.stride(), x.storage_offset(), x.is_contiguous(), x.untyped_storage().nbytes(), x.is_leaf,
            x.grad_fn, x.requires_grad, x.dtype)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_hidden_sets_have_the_seeded_calls_layout(name):
    problem = types.SimpleNamespace(get_inputs=LAYOUTS[name])
    made = [rounds.make_inputs(problem, spec, torch.device("cpu"))[0] for spec in SPECS]
    assert len({_layout(x) for x in made}) == 1, [_layout(x) for x in made]
    given = LAYOUTS[name]()[0]
    assert made[0].shape == given.shape and made[0].stride() == given.stride()
    assert made[0].requires_grad == given.requires_grad and made[0].grad_fn is None


def test_a_cached_input_is_never_written_and_its_sparse_set_moves_few_elements():
    problem = types.SimpleNamespace(get_inputs=LAYOUTS["cached"])
    before = CACHED.clone()
    seeded, scaled, _, _, sparse = (rounds.make_inputs(problem, spec, torch.device("cpu"))[0] for spec in SPECS)
    assert torch.equal(seeded, CACHED) and seeded.data_ptr() != CACHED.data_ptr()
    assert torch.equal(scaled, CACHED * 4.0)
    assert 0 < int((sparse != CACHED).sum()) <= round(1e-2 * CACHED.numel())
    _refill([seeded], [scaled])
    assert torch.equal(CACHED, before)


def test_an_expanded_inputs_sparse_set_moves_every_view_of_a_moved_element():
    problem = types.SimpleNamespace(get_inputs=LAYOUTS["expanded"])
    sparse = rounds.make_inputs(problem, SPECS[-1], torch.device("cpu"))[0]
    plain = rounds.make_inputs(problem, CallSpec(SPECS[-1].seed), torch.device("cpu"))[0]
    moved = sparse != plain
    assert bool(moved.any()) and bool((moved == moved[0]).all())  # each row is the one stored row


@pytest.mark.parametrize("name", ["expanded", "requires_grad", "sliced", "cached"])
def test_the_refill_writes_new_values_at_the_same_addresses(name):
    problem = types.SimpleNamespace(get_inputs=LAYOUTS[name])
    first = rounds.make_inputs(problem, SPECS[0], torch.device("cpu"))
    second = rounds.make_inputs(problem, SPECS[1], torch.device("cpu"))
    expected = [x.detach().clone() for x in second]
    refilled = _refill(first, second)
    assert refilled[0] is first[0] and refilled[0].data_ptr() == first[0].data_ptr()
    assert torch.equal(refilled[0], expected[0]) and _layout(refilled[0]) == _layout(first[0])


ODD_PROBLEMS = {
    "cached": "X = torch.randn(4096)\ndef get_inputs():\n    return [X]\n",
    "expanded": "def get_inputs():\n    return [torch.randn(1, 4096).expand(8, 4096)]\n",
    "requires_grad": "def get_inputs():\n    return [torch.randn(64, 64, requires_grad=True)]\n",
}

#: relu2's ``good`` kernel on a contiguous copy of its input (which these inputs may not be).
ANY_LAYOUT_RELU2 = example_candidate("good").replace("def forward(self, x):", "def forward(self, x):\n        "
                                                      "x = x.detach().contiguous()")


@pytest.mark.parametrize("name", sorted(ODD_PROBLEMS))
def test_an_honest_kernel_is_correct_on_odd_inputs(name):
    assert "x = x.detach().contiguous()" in ANY_LAYOUT_RELU2
    source = ("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
              "        return torch.relu(x) * 2.0\ndef get_init_inputs():\n    return []\n" + ODD_PROBLEMS[name])
    result = evaluate(Problem(name=f"odd_{name}", source=source), ANY_LAYOUT_RELU2, device="cpu",
                      config=EvalConfig(timeout_s=60))
    assert result.status == "correct", (result.status, result.feedback)
