"""Linear layer, division by a constant, then clamping to a range."""
import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 4096
OUT_FEATURES = 4096
DIVISOR = 2.0
CLAMP_MIN = -0.25
CLAMP_MAX = 0.25

CPU_SIZES = {"BATCH": 60, "IN_FEATURES": 100, "OUT_FEATURES": 140}


class Model(nn.Module):
    def __init__(self, in_features, out_features, divisor, clamp_min, clamp_max):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.linear(x) / self.divisor
        return torch.clamp(x, min=self.clamp_min, max=self.clamp_max)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, DIVISOR, CLAMP_MIN, CLAMP_MAX]
