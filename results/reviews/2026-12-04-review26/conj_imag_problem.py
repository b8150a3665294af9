"""Problem (KernelBench form): the imaginary part of conj(z1 * z2), z1 = a + ib, z2 = c + id (= -(ad + bc))."""
import torch
import torch.nn as nn
N = 1 << 20
CPU_SIZES = {"N": 4096}
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, a, b, c, d):
        z = torch.complex(a, b) * torch.complex(c, d)
        return z.conj().imag
def get_inputs():
    return [torch.randn(N) for _ in range(4)]
def get_init_inputs():
    return []
