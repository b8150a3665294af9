"""Cumulative sum (inclusive scan) along one dimension of a 2D tensor."""
import torch
import torch.nn as nn

BATCH = 8192
DIM = 16384
SCAN_DIM = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return [SCAN_DIM]


CPU_SIZES = {"BATCH": 64, "DIM": 300}
