"""3x3 convolution, ReLU, then addition of a learned per-channel bias."""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 64
WIDTH = 64
KERNEL_SIZE = 3

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 5, "OUT_CHANNELS": 20, "HEIGHT": 12, "WIDTH": 13}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return x + self.bias


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, (OUT_CHANNELS, 1, 1)]
