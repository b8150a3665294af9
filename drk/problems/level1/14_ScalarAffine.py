"""Scalar affine transform alpha * x + beta."""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 32768
ALPHA = 1.5
BETA = -0.25


class Model(nn.Module):
    def __init__(self, alpha, beta):
        super().__init__()
        self.alpha = alpha
        self.beta = beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.alpha + self.beta


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return [ALPHA, BETA]


CPU_SIZES = {"BATCH": 64, "DIM": 256}
