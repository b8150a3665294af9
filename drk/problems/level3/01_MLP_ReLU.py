"""Two-layer MLP: Linear -> ReLU -> Linear."""
import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 2048
HIDDEN = 4096
OUT_FEATURES = 2048

CPU_SIZES = {"BATCH": 72, "IN_FEATURES": 48, "HIDDEN": 160, "OUT_FEATURES": 40}


class Model(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN, OUT_FEATURES]
