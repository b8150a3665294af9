import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv1x1_kernel(
    x_ptr, w_ptr, b_ptr, r_ptr, y_ptr, C, OC, HW,
    sxn, sxc, swo, swc, srn, src, syn, syc,
    APPLY_RELU: tl.constexpr, HAS_RES: tl.constexpr,
    BLOCK_P: tl.constexpr, BLOCK_OC: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # per image n: Y[p, oc] = sum_c X[c, p] * W[oc, c] + b[oc]  (NCHW, spatial contiguous)
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
    acc = acc + bias[None, :]
    if APPLY_RELU:
        acc = tl.maximum(acc, 0.0)
    mask = p_ok[:, None] & oc_ok[None, :]
    if HAS_RES:
        acc += tl.load(r_ptr + n * srn + offs_oc[None, :] * src + offs_p[:, None], mask=mask, other=0.0)
    tl.store(y_ptr + n * syn + offs_oc[None, :] * syc + offs_p[:, None], acc, mask=mask)


def _conv1x1(x, conv, relu=False, residual=None):
    N, C, H, W = x.shape
    OC = conv.out_channels
    w = conv.weight.reshape(OC, C)
    HW = H * W
    y = torch.empty((N, OC, H, W), device=x.device, dtype=torch.float32)
    r = residual if residual is not None else y
    BLOCK_P = max(16, min(128, triton.next_power_of_2(HW)))
    BLOCK_OC = max(16, min(128, triton.next_power_of_2(OC)))
    grid = (triton.cdiv(HW, BLOCK_P), triton.cdiv(OC, BLOCK_OC), N)
    _conv1x1_kernel[grid](
        x, w, conv.bias, r, y, C, OC, HW,
        x.stride(0), x.stride(1), w.stride(0), w.stride(1), r.stride(0), r.stride(1), y.stride(0), y.stride(1),
        APPLY_RELU=relu, HAS_RES=residual is not None,
        BLOCK_P=BLOCK_P, BLOCK_OC=BLOCK_OC, BLOCK_K=32, num_warps=8, num_stages=3,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, hidden, kernel_size=1)
        self.conv2 = nn.Conv2d(hidden, channels, kernel_size=1)

    def forward(self, x):
        x = x.contiguous()
        h = _conv1x1(x, self.conv1, relu=True)
        return _conv1x1(h, self.conv2, residual=x)
