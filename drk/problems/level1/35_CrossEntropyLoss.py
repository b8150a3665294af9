"""Cross-entropy loss (mean over the batch) of logits against integer class targets."""
import torch
import torch.nn as nn

BATCH = 32768
NUM_CLASSES = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(predictions, targets)


def get_inputs():
    # a random logit scale per input set: the mean loss is one number, it must move from set to set
    predictions = torch.randn(BATCH, NUM_CLASSES) * (1.0 + 4.0 * torch.rand(()))
    targets = torch.randint(0, NUM_CLASSES, (BATCH,))
    return [predictions, targets]


def get_init_inputs():
    return []


CPU_SIZES = {"BATCH": 64, "NUM_CLASSES": 200}
