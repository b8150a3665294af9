import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _avgpool_sigmoid_sum_kernel(x_ptr, out_ptr, L, H, W, OH, OW,
                                KS: tl.constexpr, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    # grid = (N, cdiv(C*OH*OW, BLOCK)); each program pools a chunk of one image and adds its partial sum
    n = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < L
    ow = offs % OW
    oh = (offs // OW) % OH
    c = offs // (OW * OH)
    C = L // (OH * OW)
    base = x_ptr + (n * C + c) * H * W + (oh * STRIDE) * W + ow * STRIDE
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.static_range(KS):
        for j in tl.static_range(KS):
            acc += tl.load(base + i * W + j, mask=mask, other=0.0)
    s = tl.sigmoid(acc / (KS * KS))
    s = tl.where(mask, s, 0.0)
    tl.atomic_add(out_ptr + n, tl.sum(s, axis=0))


class ModelNew(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=kernel_size)

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        ks = self.pool.kernel_size
        st = self.pool.stride
        OH = (H - ks) // st + 1
        OW = (W - ks) // st + 1
        L = C * OH * OW
        out = torch.zeros((N,), device=x.device, dtype=torch.float32)
        BLOCK = 2048
        _avgpool_sigmoid_sum_kernel[(N, triton.cdiv(L, BLOCK))](
            x, out, L, H, W, OH, OW, KS=ks, STRIDE=st, BLOCK=BLOCK, num_warps=8)
        return out
