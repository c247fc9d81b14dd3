"""What the sparse PyTorch peers of psgrad_bench section 9 share: the keys psgrad_bench wrote, psgrad's
hashembed_mlp.v1 built from EmbeddingBags, shuffled minibatches of bags, and Thinc's per-array gradient
clipping for sparse gradients too.

psgrad_bench hashes every id as psgrad's HashEmbed does (four keys of MurmurHash3 modulo the table's
rows) and writes the keys, so a peer's table row k is the row psgrad's table holds under key k. An
id's vector is the sum of its four rows, so a bag pooled by sum is one EmbeddingBag(mode="sum") over
all its ids' keys, and a mean is the same with each key weighted 1 / (the bag's ids).
"""
import json

import peer_common as common  # before numpy and torch: it sets OPENBLAS_NUM_THREADS=1

import numpy as np


def read_description(path):
    with open(path) as f:
        return json.load(f)


def load_part(part):
    """Per field (keys, offsets) as int64 arrays, and the labels."""
    fields = [(np.fromfile(f["keys"], dtype=np.int64), np.fromfile(f["offsets"], dtype=np.int64))
              for f in part["fields"]]
    labels = np.fromfile(part["labels"], dtype=np.int64)
    for keys, offsets in fields:
        if offsets.shape[0] != labels.shape[0] + 1 or offsets[-1] != keys.shape[0]:
            raise ValueError(f"{part['labels']}: the key files do not describe {labels.shape[0]} examples")
    return fields, labels


def gather_bags(torch, keys, offsets, rows, mean):
    """The bags of examples `rows` as EmbeddingBag takes them: keys, each bag's start, and the weights
    that make a sum a mean over the bag's ids (None for a sum)."""
    starts = offsets[rows]
    lengths = offsets[rows + 1] - starts
    bag_starts = np.zeros(rows.shape[0], dtype=np.int64)
    np.cumsum(lengths[:-1], out=bag_starts[1:])
    positions = np.repeat(starts - bag_starts, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
    weights = None
    if mean:
        # Four keys an id: a bag of n ids has 4n keys, and each of them counts 1 / n.
        per_bag = np.divide(4.0, lengths, out=np.zeros(lengths.shape[0]), where=lengths > 0).astype(np.float32)
        weights = torch.from_numpy(np.repeat(per_bag, lengths))
    return torch.from_numpy(keys[positions]), torch.from_numpy(bag_starts), weights


def batch_of(torch, fields, labels, rows, mean):
    bags = [gather_bags(torch, keys, offsets, rows, mean) for keys, offsets in fields]
    return bags, torch.from_numpy(labels[rows])


def minibatches(torch, fields, labels, batch_size, seed, mean):
    """Endless minibatches, a new permutation every epoch, the last partial batch kept (as psgrad's
    SparseBatcher serves them)."""
    order = np.random.default_rng(seed)
    count = labels.shape[0]
    while True:
        permutation = order.permutation(count)
        for start in range(0, count, batch_size):
            yield batch_of(torch, fields, labels, permutation[start:start + batch_size], mean)


def build_model(torch, description):
    """hashembed_mlp.v1: per field a table of rows x width (uniform in [-0.1, 0.1], Thinc's bounds),
    pooled, concatenated, then Relu, Dropout, Relu, Dropout and the softmax layer (by the loss)."""
    from torch import nn

    class HashEmbedMLP(nn.Module):
        def __init__(self):
            super().__init__()
            fields = description["fields"]
            self.bags = nn.ModuleList(nn.EmbeddingBag(f["rows"], f["width"], mode="sum", sparse=True)
                                      for f in fields)
            for bag in self.bags:
                nn.init.uniform_(bag.weight, -0.1, 0.1)
            hidden, dropout = description["hidden_width"], description["dropout"]
            self.dense = nn.Sequential(
                nn.Linear(sum(f["width"] for f in fields), hidden), nn.ReLU(), nn.Dropout(dropout),
                nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(dropout),
                nn.Linear(hidden, description["classes"]))

        def forward(self, bags):
            pooled = [bag(keys, starts, per_sample_weights=weights)
                      for bag, (keys, starts, weights) in zip(self.bags, bags)]
            return self.dense(torch.cat(pooled, dim=1))

    return HashEmbedMLP()


class RowwiseLazyAdam:
    """psgrad's lazy Adam (model/lazy_adam.cpp) on sparse gradients: only the rows a batch touched step,
    each with its own step count for the bias correction, Thinc's Adam.v1 arithmetic. SparseAdam keeps
    one step count per table instead, and torch 1.13 spends most of its step in sparse_mask."""

    def __init__(self, torch, parameters, lr, betas=(0.9, 0.999), eps=1e-8):
        self.torch = torch
        self.parameters = list(parameters)
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.state = [(torch.zeros_like(p), torch.zeros_like(p), torch.zeros(p.shape[0], dtype=torch.float64))
                      for p in self.parameters]

    def zero_grad(self, set_to_none=True):
        for p in self.parameters:
            p.grad = None

    def step(self):
        torch = self.torch
        with torch.no_grad():
            for p, (m, v, steps) in zip(self.parameters, self.state):
                if p.grad is None:
                    continue
                gradient = p.grad.coalesce()
                rows, values = gradient._indices()[0], gradient._values()
                t = steps.index_select(0, rows) + 1
                steps.index_copy_(0, rows, t)
                m_rows = m.index_select(0, rows).mul_(self.beta1).add_(values, alpha=1 - self.beta1)
                v_rows = v.index_select(0, rows).mul_(self.beta2).addcmul_(values, values, value=1 - self.beta2)
                m.index_copy_(0, rows, m_rows)
                v.index_copy_(0, rows, v_rows)
                rate = (self.lr * torch.sqrt(1 - self.beta2 ** t) / (1 - self.beta1 ** t)).float().unsqueeze(1)
                p.index_add_(0, rows, -rate * m_rows / (v_rows.sqrt() + self.eps))


def optimizers(torch, model, learn_rate, tables="sparse_adam"):
    """For the tables SparseAdam (PyTorch's own) or psgrad's row-wise lazy Adam, both stepping only the
    rows a batch touched; Adam for the dense layers; Adam.v1's betas and eps."""
    if tables == "lazy_adam":
        tables = RowwiseLazyAdam(torch, model.bags.parameters(), learn_rate)
        dense = torch.optim.Adam(model.dense.parameters(), lr=learn_rate, betas=(0.9, 0.999), eps=1e-8)
        return [tables, dense]
    tables = torch.optim.SparseAdam(list(model.bags.parameters()), lr=learn_rate, betas=(0.9, 0.999), eps=1e-8)
    dense = torch.optim.Adam(model.dense.parameters(), lr=learn_rate, betas=(0.9, 0.999), eps=1e-8)
    return [tables, dense]


def clip_each_gradient(torch, model, clip=1.0):
    """Thinc clips each parameter array by its own norm; a table's sparse gradient is coalesced first,
    so that a row two ids share counts once with their sum."""
    with torch.no_grad():
        for bag in model.bags:
            gradient = bag.weight.grad.coalesce()
            norm = gradient._values().norm()
            if norm > clip:
                gradient = gradient * (clip / norm)
            bag.weight.grad = gradient
    common.clip_each_gradient(torch, list(model.dense.parameters()), clip)


def training_step(torch, model, optimizer_list, batch):
    import torch.nn.functional as F
    bags, labels = batch
    for optimizer in optimizer_list:
        optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(bags), labels)
    loss.backward()
    clip_each_gradient(torch, model)
    for optimizer in optimizer_list:
        optimizer.step()
    return labels.shape[0]
