"""MLP-Mixer token-mixing block: x + (MLP over the token axis of LayerNorm(x))."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
TOKENS = 256
CHANNELS = 512
TOKEN_HIDDEN = 1024

CPU_SIZES = {"BATCH": 2, "TOKENS": 20, "CHANNELS": 24, "TOKEN_HIDDEN": 40}


class Model(nn.Module):
    def __init__(self, num_tokens, channels, token_hidden):
        super().__init__()
        self.norm = nn.LayerNorm(channels)
        self.fc1 = nn.Linear(num_tokens, token_hidden)
        self.fc2 = nn.Linear(token_hidden, num_tokens)

    def forward(self, x):
        y = self.norm(x).transpose(1, 2)
        y = self.fc2(F.gelu(self.fc1(y)))
        return x + y.transpose(1, 2)


def get_inputs():
    return [torch.randn(BATCH, TOKENS, CHANNELS)]


def get_init_inputs():
    return [TOKENS, CHANNELS, TOKEN_HIDDEN]
