"""Linear layer, scaling by a constant, then a residual add of a second input."""
import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 4096
OUT_FEATURES = 4096
SCALE = 0.5

CPU_SIZES = {"BATCH": 80, "IN_FEATURES": 112, "OUT_FEATURES": 96}


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x, residual):
        return self.linear(x) * self.scale + residual


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES), torch.randn(BATCH, OUT_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, SCALE]
