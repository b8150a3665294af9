"""Pre-LN transformer attention sublayer: x + MHA(LayerNorm(x)) with QKV and output projections."""
import math

import torch
import torch.nn as nn

BATCH = 8
SEQ = 1024
EMBED_DIM = 1024
NUM_HEADS = 16

CPU_SIZES = {"BATCH": 2, "SEQ": 40, "EMBED_DIM": 64, "NUM_HEADS": 4}


class Model(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.norm = nn.LayerNorm(embed_dim)
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        B, S, E = x.shape
        H = self.num_heads
        D = E // H
        qkv = self.qkv(self.norm(x)).reshape(B, S, 3, H, D).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(D), dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(B, S, E)
        return x + self.proj(y)


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED_DIM)]


def get_init_inputs():
    return [EMBED_DIM, NUM_HEADS]
