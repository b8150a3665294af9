"""Linear layer followed by Mish (x * tanh(softplus(x)))."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
IN_FEATURES = 4096
OUT_FEATURES = 4096

CPU_SIZES = {"BATCH": 64, "IN_FEATURES": 96, "OUT_FEATURES": 176}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.mish(self.linear(x) * 3.0)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
