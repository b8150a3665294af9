"""RMS normalization over the last dimension with a learnable scale."""
import torch
import torch.nn as nn

BATCH = 16384
DIM = 8192
EPS = 1e-6


class Model(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(dim).uniform_(0.5, 1.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + self.eps)
        return x / rms * self.weight


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return [DIM, EPS]


CPU_SIZES = {"BATCH": 64, "DIM": 256}
