"""Example integer problem: y = 3 * x + 1 on int32 tensors (exact comparison territory; see candidates/)."""
import torch
import torch.nn as nn
N = 1 << 24  # 16M int32
CPU_SIZES = {"N": 4096}
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return x.to(torch.int32) * 3 + 1
def get_inputs():
    return [torch.randint(-1000, 1000, (N,), dtype=torch.int32)]
def get_init_inputs():
    return []
