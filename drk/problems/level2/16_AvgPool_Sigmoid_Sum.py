"""2D average pooling (2x2), sigmoid, then a sum over channels and spatial dimensions."""
import torch
import torch.nn as nn

BATCH = 128
CHANNELS = 64
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 2

CPU_SIZES = {"BATCH": 3, "CHANNELS": 4, "HEIGHT": 10, "WIDTH": 13}


class Model(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=kernel_size)

    def forward(self, x):
        x = torch.sigmoid(self.pool(x))
        return torch.sum(x, dim=[1, 2, 3])


def get_inputs():
    # a shift per sample: sums of sigmoids of zero-mean values are all ~N/2, whatever the input
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) + 2.0 * torch.randn(BATCH, 1, 1, 1)]


def get_init_inputs():
    return [KERNEL_SIZE]
