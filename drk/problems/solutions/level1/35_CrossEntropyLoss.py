"""Triton solution: cross-entropy; a per-row logsumexp - logit[target] kernel, then a one-program mean."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_ce_kernel(logits_ptr, targets_ptr, loss_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = logits_ptr + row.to(tl.int64) * stride_row
    cols = tl.arange(0, BLOCK_SIZE)
    m_i = tl.full([], float("-inf"), tl.float32)
    l_i = tl.full([], 0.0, tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + cols
        x = tl.load(row_ptr + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m_i, tl.max(x, axis=0))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m_i = m_new
    target = tl.load(targets_ptr + row)
    target_logit = tl.load(row_ptr + target).to(tl.float32)
    tl.store(loss_ptr + row, m_i + tl.log(l_i) - target_logit)


@triton.jit
def mean_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        predictions = predictions.contiguous()
        targets = targets.contiguous()
        n_rows, n_cols = predictions.shape
        row_loss = torch.empty(n_rows, dtype=torch.float32, device=predictions.device)
        BLOCK_SIZE = min(triton.next_power_of_2(n_cols), 4096)
        row_ce_kernel[(n_rows,)](predictions, targets, row_loss, n_cols, predictions.stride(0),
                                 BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        out = torch.empty((), dtype=torch.float32, device=predictions.device)
        mean_kernel[(1,)](row_loss, out, n_rows, BLOCK_SIZE=min(triton.next_power_of_2(n_rows), 4096), num_warps=8)
        return out
