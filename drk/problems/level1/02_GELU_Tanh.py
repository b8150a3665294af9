"""GELU activation (tanh approximation) applied elementwise."""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return []


CPU_SIZES = {"BATCH": 64, "DIM": 256}
