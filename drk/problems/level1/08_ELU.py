"""ELU activation with a configurable alpha."""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 32768
ALPHA = 1.0


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.elu(x, alpha=self.alpha)


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return [ALPHA]


CPU_SIZES = {"BATCH": 64, "DIM": 256}
