"""Row-wise L1 normalization rescaled to unit mean magnitude: x / mean(|x|) over the last dimension."""
import torch
import torch.nn as nn

BATCH = 16384
DIM = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.mean(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return []


CPU_SIZES = {"BATCH": 64, "DIM": 256}
