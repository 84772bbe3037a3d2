"""Fine-tune a tiny token classifier on every NeuronCore with xmp.spawn.

Batches are dicts, Hugging Face style, and the model is called as model(**batch).

    python train_xmp.py --epochs 4
"""

import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr

VOCAB = 50
SEQ_LEN = 12


class ToyTokens(Dataset):
    """Sequences whose label is whether token 7 appears more often than token 3."""

    def __init__(self, n=384, seed=0):
        gen = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(1, VOCAB, (n, SEQ_LEN), generator=gen)
        self.labels = ((self.ids == 7).sum(1) > (self.ids == 3).sum(1)).long()

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {
            "input_ids": self.ids[i],
            "attention_mask": torch.ones(SEQ_LEN, dtype=torch.long),
            "labels": self.labels[i],
        }


class TinyClassifier(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 2))

    def forward(self, input_ids, attention_mask, labels=None):
        mask = attention_mask.unsqueeze(-1).float()
        pooled = (self.embed(input_ids) * mask).sum(1) / mask.sum(1)
        logits = self.head(pooled)
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits, labels)
        return {"loss": loss, "logits": logits}


def get_dataloader(batch_size, device):
    dataset = ToyTokens()
    sampler = DistributedSampler(
        dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True, seed=1
    )
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=True)
    return pl.MpDeviceLoader(loader, device), sampler


def train_one_epoch(model, loader, optimizer):
    model.train()
    total = 0.0
    steps = 0
    for batch in loader:
        optimizer.zero_grad()
        outputs = model(**batch)
        outputs["loss"].backward()
        xm.optimizer_step(optimizer)
        total += outputs["loss"].item()
        steps += 1
    return total / steps


def _mp_fn(index, args):
    torch.manual_seed(args.seed)
    device = torch_xla.device()
    model = TinyClassifier().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loader, sampler = get_dataloader(args.batch_size, device)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        avg = train_one_epoch(model, loader, optimizer)
        xm.master_print(f"epoch {epoch} loss {avg:.4f}")

    checksum = sum(p.detach().cpu().sum().item() for p in model.parameters())
    print(f"param checksum rank={xr.global_ordinal()}: {checksum:.8f}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--seed", type=int, default=0)
    xmp.spawn(_mp_fn, args=(parser.parse_args(),))
