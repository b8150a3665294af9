"""Single-head scaled dot-product attention: softmax(Q K^T / sqrt(d)) V."""
import math

import torch
import torch.nn as nn

BATCH = 16
SEQ = 2048
HEAD_DIM = 64

CPU_SIZES = {"BATCH": 2, "SEQ": 80, "HEAD_DIM": 24}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    q = torch.randn(BATCH, SEQ, HEAD_DIM) * 1.5
    k = torch.randn(BATCH, SEQ, HEAD_DIM) * 1.5
    v = torch.randn(BATCH, SEQ, HEAD_DIM)
    return [q, k, v]


def get_init_inputs():
    return []
