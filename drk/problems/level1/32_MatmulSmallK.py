"""Matrix multiplication with a small inner dimension: C = A @ B, A (M, K), B (K, N), K << M, N."""
import torch
import torch.nn as nn

M = 16384
N = 16384
K = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K) / K ** 0.5
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []


CPU_SIZES = {"M": 256, "N": 200, "K": 32}
