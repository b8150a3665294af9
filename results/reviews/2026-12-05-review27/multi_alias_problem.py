"""Five outputs: the input itself (an alias of the input), relu2 twice (the same tensor), a bool mask and a complex
view of stacked (x, y): aliasing between outputs and with an input, bool and complex dtypes under direct reads."""
import torch
import torch.nn as nn
N = 4096
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        y = torch.relu(x) * 2.0
        return x, y, y, x > 0, torch.view_as_complex(torch.stack([x, y], -1))
def get_inputs():
    return [torch.randn(N)]
def get_init_inputs():
    return []
