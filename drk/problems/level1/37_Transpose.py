"""Matrix transpose materialized as a new contiguous tensor: x.T.contiguous()."""
import torch
import torch.nn as nn

M = 8192
N = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(0, 1).contiguous()


def get_inputs():
    x = torch.randn(M, N)
    return [x]


def get_init_inputs():
    return []


CPU_SIZES = {"M": 100, "N": 260}
