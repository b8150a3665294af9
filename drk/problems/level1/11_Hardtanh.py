"""Hardtanh: clamp of the input to [min_val, max_val]."""
import torch
import torch.nn as nn

BATCH = 4096
DIM = 32768
MIN_VAL = -1.0
MAX_VAL = 1.0


class Model(nn.Module):
    def __init__(self, min_val, max_val):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return [MIN_VAL, MAX_VAL]


CPU_SIZES = {"BATCH": 64, "DIM": 256}
