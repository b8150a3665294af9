"""LeakyReLU activation with a configurable negative slope."""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 32768
NEGATIVE_SLOPE = 0.01


class Model(nn.Module):
    def __init__(self, negative_slope):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return [NEGATIVE_SLOPE]


CPU_SIZES = {"BATCH": 64, "DIM": 256}
