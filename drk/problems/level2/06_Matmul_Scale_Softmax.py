"""Linear layer, multiplication by a temperature factor, then softmax over the feature dimension."""
import torch
import torch.nn as nn

BATCH = 8192
IN_FEATURES = 4096
OUT_FEATURES = 1024
SCALE = 10.0

CPU_SIZES = {"BATCH": 48, "IN_FEATURES": 64, "OUT_FEATURES": 300}


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return torch.softmax(self.linear(x) * self.scale, dim=1)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES) * (0.5 + 2.0 * torch.rand(BATCH, 1))]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, SCALE]
