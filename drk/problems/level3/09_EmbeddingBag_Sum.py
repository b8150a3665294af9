"""Embedding lookup of fixed-size bags of indices followed by a sum over each bag."""
import torch
import torch.nn as nn

NUM_EMBEDDINGS = 100000
EMBED_DIM = 512
BATCH = 4096
BAG_SIZE = 64

CPU_SIZES = {"NUM_EMBEDDINGS": 50, "EMBED_DIM": 40, "BATCH": 6, "BAG_SIZE": 10}


class Model(nn.Module):
    def __init__(self, num_embeddings, embed_dim):
        super().__init__()
        self.embedding = nn.Embedding(num_embeddings, embed_dim)

    def forward(self, indices):
        return self.embedding(indices).sum(dim=1)


def get_inputs():
    return [torch.randint(0, NUM_EMBEDDINGS, (BATCH, BAG_SIZE))]


def get_init_inputs():
    return [NUM_EMBEDDINGS, EMBED_DIM]
