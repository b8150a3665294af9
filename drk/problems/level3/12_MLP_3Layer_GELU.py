"""Three-layer MLP: Linear -> GELU -> Linear -> GELU -> Linear."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2048
IN_FEATURES = 1024
HIDDEN = 4096
OUT_FEATURES = 1024

CPU_SIZES = {"BATCH": 48, "IN_FEATURES": 40, "HIDDEN": 144, "OUT_FEATURES": 24}


class Model(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, out_features)

    def forward(self, x):
        x = F.gelu(self.fc1(x))
        x = F.gelu(self.fc2(x))
        return self.fc3(x)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN, OUT_FEATURES]
