"""Example problem with two outputs: (relu(x), x * x), returned as a tuple (see candidates/)."""
import torch
import torch.nn as nn
N = 1 << 24  # 16M floats
CPU_SIZES = {"N": 4096}
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.relu(x), x * x
def get_inputs():
    return [torch.randn(N)]
def get_init_inputs():
    return []
