"""Mean squared error loss mean((predictions - targets)^2) over all elements."""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    predictions = torch.randn(BATCH, DIM) * (0.5 + 2.0 * torch.rand(()))  # the loss moves from set to set
    targets = torch.randn(BATCH, DIM)
    return [predictions, targets]


def get_init_inputs():
    return []


CPU_SIZES = {"BATCH": 64, "DIM": 256}
