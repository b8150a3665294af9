"""Linear layer, Swish activation (x * sigmoid(x)), then multiplication by a constant."""
import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 2048
OUT_FEATURES = 4096
SCALING_FACTOR = 2.0

CPU_SIZES = {"BATCH": 100, "IN_FEATURES": 64, "OUT_FEATURES": 130}


class Model(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.linear(x)
        x = x * torch.sigmoid(x)
        return x * self.scaling_factor


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, SCALING_FACTOR]
