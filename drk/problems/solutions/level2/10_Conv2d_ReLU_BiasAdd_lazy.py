import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _relu_channel_bias_kernel(x_ptr, b_ptr, y_ptr, n_elements, HW, C, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    ch = (offs // HW) % C
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + ch, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        h = F.conv2d(x, self.conv.weight, self.conv.bias).contiguous()
        y = h  # the Triton pass works in place on the torch result
        n = h.numel()
        _relu_channel_bias_kernel[(triton.cdiv(n, 1024),)](
            h, self.bias, y, n, h.shape[2] * h.shape[3], h.shape[1], BLOCK=1024)
        return y
