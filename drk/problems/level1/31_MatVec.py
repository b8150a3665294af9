"""Matrix-vector multiplication y = A @ x with A (M, K) and x (K, 1)."""
import torch
import torch.nn as nn

M = 16384
K = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, 1)
    return [A, B]


def get_init_inputs():
    return []


CPU_SIZES = {"M": 200, "K": 500}
