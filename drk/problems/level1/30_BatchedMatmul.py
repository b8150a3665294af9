"""Batched matrix multiplication C[b] = A[b] @ B[b]."""
import torch
import torch.nn as nn

BATCH = 32
M = 1024
K = 1024
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs():
    A = torch.randn(BATCH, M, K) / K ** 0.5
    B = torch.randn(BATCH, K, N)
    return [A, B]


def get_init_inputs():
    return []


CPU_SIZES = {"BATCH": 4, "M": 64, "K": 48, "N": 80}
