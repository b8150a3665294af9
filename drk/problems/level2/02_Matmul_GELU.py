"""Linear layer followed by exact (erf) GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2048
IN_FEATURES = 4096
OUT_FEATURES = 8192

CPU_SIZES = {"BATCH": 72, "IN_FEATURES": 96, "OUT_FEATURES": 136}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
