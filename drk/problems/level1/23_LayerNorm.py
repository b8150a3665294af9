"""Layer normalization over the last dimension with learnable weight and bias."""
import torch
import torch.nn as nn

BATCH = 16384
DIM = 8192
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=eps)
        # non-trivial affine parameters so that weight and bias actually matter
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    x = torch.randn(BATCH, DIM) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return [DIM, EPS]


CPU_SIZES = {"BATCH": 64, "DIM": 256}
