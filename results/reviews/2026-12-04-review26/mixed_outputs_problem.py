"""Problem (KernelBench form): relu2 and many honest views and dtypes of it as outputs: aliases of one another, a
reshaped view, an expanded view (stride 0), a transposed view, a strided slice, a 0-dim sum, bool, int64 (0-dim),
int32, bfloat16, complex64, and the input itself."""
import torch
import torch.nn as nn
N = 1 << 20
CPU_SIZES = {"N": 4096}
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        y = torch.relu(x) * 2.0
        m = y.view(64, -1)
        return (y, m, y.unsqueeze(0).expand(3, -1), m.t(), y[::2], y.sum(), x > 0, torch.argmax(x),
                (x * 10).to(torch.int32), y.to(torch.bfloat16), torch.complex(y, x), x)
def get_inputs():
    return [torch.randn(N)]
def get_init_inputs():
    return []
