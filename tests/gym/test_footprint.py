"""A problem's sizes read on the meta device, for a GPU pool's admissions (drk.gym.footprint)."""

from drk.examples import example_problem
from drk.gym import footprint

LINEAR = '''
import torch, torch.nn as nn

class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)
        self.register_buffer("scale", torch.ones(n_out))

    def forward(self, x):
        y = self.fc(x) * self.scale
        return y, y.sum(1)

def get_inputs():
    return [torch.randn(16, 64)]

def get_init_inputs():
    return [64, 32]
'''


def test_a_calls_bytes_are_its_inputs_outputs_parameters_and_buffers():
    inputs, outputs = 16 * 64 * 4, (16 * 32 + 16) * 4
    parameters, buffers = (64 * 32 + 32) * 4, 32 * 4
    assert footprint.read_call_bytes(LINEAR) == inputs + outputs + parameters + buffers


def test_what_cannot_be_read_on_the_meta_device_has_no_estimate():
    data_dependent = LINEAR.replace("return y, y.sum(1)", "return y[: int(y.sum().item() > 0) + 1]")
    on_a_device = LINEAR.replace("torch.randn(16, 64)", "torch.randn(16, 64).cuda()")
    broken = LINEAR.replace("def get_inputs():", "def get_inputs(:")
    for source in (data_dependent, on_a_device, broken):
        assert footprint.read_call_bytes(source) is None


def test_the_child_reads_a_batch_and_survives_what_it_cannot_read():
    """One child process for many problems, at their GPU sizes (not ``CPU_SIZES``); a module that cannot be read,
    or even exits the child, gives None, never an exception in the caller."""
    relu2 = example_problem("relu2").source
    sizes = footprint.call_bytes([LINEAR, "this is not python", relu2])
    assert sizes[:2] == [footprint.read_call_bytes(LINEAR), None]
    assert sizes[2] == footprint.read_call_bytes(relu2) and sizes[2] > 0
    assert footprint.call_bytes([LINEAR, "import os\nos._exit(3)"]) == [None, None]
    assert footprint.call_bytes([]) == []


def test_the_judges_expected_peak_grows_with_a_calls_bytes():
    assert footprint.judge_peak_bytes(0) == footprint.JUDGE_BASE_BYTES
    gib = 2**30
    assert footprint.judge_peak_bytes(gib) == int(footprint.JUDGE_PEAK_PER_CALL_BYTE * gib) + footprint.JUDGE_BASE_BYTES
