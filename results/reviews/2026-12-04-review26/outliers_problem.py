"""Problem (KernelBench form): y = 2 relu(x), and the input's outliers |x| > 1e6 (none for these inputs: an empty
tensor, as torch returns it, with data_ptr() == 0)."""
import torch
import torch.nn as nn
N = 1 << 20
CPU_SIZES = {"N": 4096}
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.relu(x) * 2.0, x[x.abs() > 1e6]
def get_inputs():
    return [torch.randn(N)]
def get_init_inputs():
    return []
