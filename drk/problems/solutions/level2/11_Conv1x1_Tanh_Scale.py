import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv1x1_tanh_scale_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, C, OC, HW, scale,
    sxn, sxc, swo, swc, syn, syc,
    BLOCK_P: tl.constexpr, BLOCK_OC: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # per image n: Y[p, oc] = sum_c X[c, p] * W[oc, c]   (spatial dims are contiguous)
    pid_p = tl.program_id(0)
    pid_oc = tl.program_id(1)
    n = tl.program_id(2)
    offs_p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    offs_oc = pid_oc * BLOCK_OC + tl.arange(0, BLOCK_OC)
    offs_k = tl.arange(0, BLOCK_K)
    p_ok = offs_p < HW
    oc_ok = offs_oc < OC
    acc = tl.zeros((BLOCK_P, BLOCK_OC), dtype=tl.float32)
    for k0 in range(0, C, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(x_ptr + n * sxn + kk[None, :] * sxc + offs_p[:, None],
                    mask=p_ok[:, None] & (kk[None, :] < C), other=0.0)
        b = tl.load(w_ptr + offs_oc[None, :] * swo + kk[:, None] * swc,
                    mask=oc_ok[None, :] & (kk[:, None] < C), other=0.0)
        acc += tl.dot(a, b)
    bias = tl.load(b_ptr + offs_oc, mask=oc_ok, other=0.0)
    v = acc + bias[None, :]
    v = (2.0 * tl.sigmoid(2.0 * v) - 1.0) * scale  # tanh(v) * scale
    tl.store(y_ptr + n * syn + offs_oc[None, :] * syc + offs_p[:, None], v, mask=p_ok[:, None] & oc_ok[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)
        self.scale = scale

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        w = self.conv.weight.reshape(self.conv.out_channels, C)
        OC = w.shape[0]
        HW = H * W
        y = torch.empty((N, OC, H, W), device=x.device, dtype=torch.float32)
        BLOCK_P = max(16, min(128, triton.next_power_of_2(HW)))
        BLOCK_OC = max(16, min(128, triton.next_power_of_2(OC)))
        grid = (triton.cdiv(HW, BLOCK_P), triton.cdiv(OC, BLOCK_OC), N)
        _conv1x1_tanh_scale_kernel[grid](
            x, w, self.conv.bias, y, C, OC, HW, float(self.scale),
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
            BLOCK_P=BLOCK_P, BLOCK_OC=BLOCK_OC, BLOCK_K=32, num_warps=8, num_stages=3,
        )
        return y
