"""Multi-head causal attention on pre-split heads: softmax(mask(Q K^T / sqrt(d))) V."""
import math

import torch
import torch.nn as nn

BATCH = 8
HEADS = 16
SEQ = 1024
HEAD_DIM = 64

CPU_SIZES = {"BATCH": 2, "HEADS": 2, "SEQ": 72, "HEAD_DIM": 32}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        S = q.shape[-2]
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        mask = torch.ones(S, S, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM) * 1.5
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM) * 1.5
    v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    return [q, k, v]


def get_init_inputs():
    return []
