"""Linear layer, GroupNorm over feature groups, then Hardtanh."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
IN_FEATURES = 2048
OUT_FEATURES = 4096
NUM_GROUPS = 32

CPU_SIZES = {"BATCH": 72, "IN_FEATURES": 40, "OUT_FEATURES": 120, "NUM_GROUPS": 4}


class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        x = self.group_norm(self.gemm(x))
        return F.hardtanh(x, min_val=-1.5, max_val=1.5)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, NUM_GROUPS]
