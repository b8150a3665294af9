"""Pointwise (1x1) convolution, tanh, then multiplication by a constant."""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 256
OUT_CHANNELS = 256
HEIGHT = 64
WIDTH = 64
SCALE = 1.5

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 40, "OUT_CHANNELS": 24, "HEIGHT": 10, "WIDTH": 15}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)
        self.scale = scale

    def forward(self, x):
        return torch.tanh(self.conv(x)) * self.scale


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, SCALE]
