"""DistributedDataParallel on the XLA backend, configured from a dict and the command line.

    torchrun --nproc_per_node=2 train_ddp.py --device xla
"""

import argparse
import logging

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401
import torch_xla.runtime as xr

DEVICE = "xla"
DEFAULTS = {"device": "xla", "lr": 0.05, "epochs": 6, "strategy": "xla"}  # strategy: not a device
logger = logging.getLogger("xla_ddp_trainer")


def build_model(device="xla", width=32):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, width), nn.Tanh(), nn.Linear(width, 1)).to(device)


def batches(rank, world_size, steps=12, batch=24):
    gen = torch.Generator().manual_seed(100 + rank)
    for _ in range(steps):
        x = torch.randn(batch, 6, generator=gen)
        yield x, (x ** 2).sum(1, keepdim=True) * 0.3


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default=DEFAULTS["device"], choices=["xla", "cpu"])
    parser.add_argument("--lr", type=float, default=DEFAULTS["lr"])
    parser.add_argument("--epochs", type=int, default=DEFAULTS["epochs"])
    return parser.parse_args()


def main():
    args = parse_args()
    dist.init_process_group("xla", init_method="xla://")
    rank, world_size = xr.global_ordinal(), xr.world_size()
    if args.device == "xla":
        logger.info("running on %s with %d replicas", xr.device_type(), world_size)
    model = build_model(args.device)
    ddp_model = DDP(model, gradient_as_bucket_view=True)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=args.lr)
    loss_fn = nn.MSELoss()

    for epoch in range(args.epochs):
        for x, y in batches(rank, world_size):
            x, y = x.to(args.device), y.to(args.device)
            optimizer.zero_grad()
            loss = loss_fn(ddp_model(x), y)
            loss.backward()
            optimizer.step()
            xm.mark_step()
        if rank == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}", flush=True)

    checksum = sum(p.detach().cpu().sum().item() for p in model.parameters())
    print(f"param checksum rank={rank}: {checksum:.8f}", flush=True)


if __name__ == "__main__":
    main()
