"""Example compute-bound problem: C = A @ B for square fp32 matrices (timing-noise benchmark)."""
import torch
import torch.nn as nn

M = 4096
N = 4096
K = 4096
CPU_SIZES = {"M": 64, "N": 64, "K": 64}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(M, K) / K**0.5, torch.randn(K, N)]


def get_init_inputs():
    return []
