"""Min reduction (values) over one dimension of a 3D tensor."""
import torch
import torch.nn as nn

BATCH = 128
DIM1 = 4096
DIM2 = 256
REDUCE_DIM = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=self.dim)[0]


def get_inputs():
    x = torch.randn(BATCH, DIM1, DIM2)
    return [x]


def get_init_inputs():
    return [REDUCE_DIM]


CPU_SIZES = {"BATCH": 8, "DIM1": 64, "DIM2": 64}
