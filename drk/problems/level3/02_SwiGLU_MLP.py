"""Gated MLP (SwiGLU, as in LLaMA): w2(silu(w1 x) * w3 x), no biases."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 4096
DIM = 2048
HIDDEN = 5632

CPU_SIZES = {"TOKENS": 64, "DIM": 48, "HIDDEN": 136}


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def get_inputs():
    return [torch.randn(TOKENS, DIM)]


def get_init_inputs():
    return [DIM, HIDDEN]
