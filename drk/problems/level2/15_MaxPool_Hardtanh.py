"""2D max pooling (2x2, stride 2) followed by Hardtanh."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
CHANNELS = 64
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 2

CPU_SIZES = {"BATCH": 2, "CHANNELS": 4, "HEIGHT": 14, "WIDTH": 19}


class Model(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=kernel_size)

    def forward(self, x):
        return F.hardtanh(self.pool(x), min_val=-1.0, max_val=1.0)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE]
