"""Pointwise bottleneck block: x + conv1x1(ReLU(conv1x1(x)))."""
import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 256
HIDDEN = 512
HEIGHT = 64
WIDTH = 64

CPU_SIZES = {"BATCH": 2, "CHANNELS": 24, "HIDDEN": 40, "HEIGHT": 9, "WIDTH": 10}


class Model(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, hidden, kernel_size=1)
        self.conv2 = nn.Conv2d(hidden, channels, kernel_size=1)

    def forward(self, x):
        return x + self.conv2(torch.relu(self.conv1(x)))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, HIDDEN]
