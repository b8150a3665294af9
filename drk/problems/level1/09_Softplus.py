"""Softplus activation log(1 + exp(x)) (beta=1, threshold=20)."""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softplus(x)


def get_inputs():
    x = torch.randn(BATCH, DIM) * 8
    return [x]


def get_init_inputs():
    return []


CPU_SIZES = {"BATCH": 64, "DIM": 256}
