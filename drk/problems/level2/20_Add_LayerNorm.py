"""Residual add of two inputs followed by LayerNorm over the last dimension."""
import torch
import torch.nn as nn

BATCH = 32
SEQ = 512
DIM = 2048

CPU_SIZES = {"BATCH": 2, "SEQ": 20, "DIM": 200}


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, y):
        return self.norm(x + y)


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM), torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM]
