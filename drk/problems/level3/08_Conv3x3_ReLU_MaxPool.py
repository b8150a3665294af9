"""Small conv block: 3x3 convolution (padding 1), ReLU, then 2x2 max pooling."""
import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 64
WIDTH = 64

CPU_SIZES = {"BATCH": 2, "IN_CHANNELS": 5, "OUT_CHANNELS": 20, "HEIGHT": 10, "WIDTH": 13}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
