"""Example problem: y = 2 * relu(x). Small enough to read, big enough on a GPU to time (see candidates/)."""
import torch
import torch.nn as nn
N = 1 << 26  # 64M floats: ~0.25 ms for the two-kernel reference on an H200
CPU_SIZES = {"N": 1 << 17}  # 131072 outputs: above rounds.SAMPLE_ELEMENTS, like many KernelBench problems run on CPU
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.relu(x) * 2.0
def get_inputs():
    return [torch.randn(N)]
def get_init_inputs():
    return []
