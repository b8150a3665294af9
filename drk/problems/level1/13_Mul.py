"""Elementwise multiplication of two tensors of the same shape."""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a * b


def get_inputs():
    a = torch.randn(BATCH, DIM)
    b = torch.randn(BATCH, DIM)
    return [a, b]


def get_init_inputs():
    return []


CPU_SIZES = {"BATCH": 64, "DIM": 256}
