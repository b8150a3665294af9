"""Fully connected layer y = x @ W.T + b (nn.Linear)."""
import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 4096
OUT_FEATURES = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def get_inputs():
    x = torch.randn(BATCH, IN_FEATURES)
    return [x]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]


CPU_SIZES = {"BATCH": 64, "IN_FEATURES": 128, "OUT_FEATURES": 96}
