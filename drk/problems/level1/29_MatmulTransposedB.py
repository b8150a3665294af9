"""Matrix multiplication with a transposed second operand: C = A @ B.T with B stored as (N, K)."""
import torch
import torch.nn as nn

M = 4096
N = 4096
K = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)


def get_inputs():
    A = torch.randn(M, K) / K ** 0.5
    B = torch.randn(N, K)
    return [A, B]


def get_init_inputs():
    return []


CPU_SIZES = {"M": 130, "N": 70, "K": 100}
