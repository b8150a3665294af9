"""3x3 convolution (padding 1), ReLU, then global average pooling over the spatial dimensions."""
import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 64
WIDTH = 64

CPU_SIZES = {"BATCH": 3, "IN_CHANNELS": 6, "OUT_CHANNELS": 24, "HEIGHT": 11, "WIDTH": 12}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return x.mean(dim=(2, 3))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
