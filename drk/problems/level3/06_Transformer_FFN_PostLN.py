"""Post-LN transformer feed-forward sublayer: LayerNorm(x + fc2(GELU(fc1(x))))."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ = 1024
EMBED_DIM = 1024
HIDDEN = 4096

CPU_SIZES = {"BATCH": 2, "SEQ": 24, "EMBED_DIM": 48, "HIDDEN": 136}


class Model(nn.Module):
    def __init__(self, embed_dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(embed_dim, hidden)
        self.fc2 = nn.Linear(hidden, embed_dim)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        return self.norm(x + self.fc2(F.gelu(self.fc1(x))))


def get_inputs():
    return [torch.randn(BATCH, SEQ, EMBED_DIM)]


def get_init_inputs():
    return [EMBED_DIM, HIDDEN]
