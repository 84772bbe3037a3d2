import torch
import torch.nn as nn

import torch_xla.core.xla_model as xm

from .data import build_train_loader
from .env import get_device, init_distributed
from .model import build_model
from .utils import checksum, log


def _run_epoch(model, loader, optimizer, loss_fn):
    total, batches = 0.0, 0
    for features, targets in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(features), targets)
        loss.backward()
        xm.optimizer_step(optimizer)
        total += loss.item()
        batches += 1
    return total / batches


def fit(epochs=6, lr=0.05):
    rank, world_size = init_distributed()
    device = get_device()
    torch.manual_seed(0)
    model = build_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.BCEWithLogitsLoss()
    loader, sampler = build_train_loader(device, rank, world_size)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        avg = _run_epoch(model, loader, optimizer, loss_fn)
        log(f"epoch {epoch} loss {avg:.4f}")
    print(f"param checksum rank={rank}: {checksum(model):.8f}", flush=True)
    return model
