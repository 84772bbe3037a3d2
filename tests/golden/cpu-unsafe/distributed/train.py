"""Data-parallel regression on Trainium with PyTorch/XLA: one process per NeuronCore.

Run with:  python train.py --epochs 2 --out checkpoint.pt
(xmp.spawn starts one worker per device; xm.optimizer_step all-reduces the gradients.)
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils._pytree import tree_map_only
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

# runtime knobs for the XLA path
os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer"


def build_loader(rank: int, world_size: int, batch_size: int) -> tuple[DataLoader, DistributedSampler]:
    gen = torch.Generator().manual_seed(1234)
    features = torch.randn(512, 16, generator=gen)
    targets = features.sum(dim=1, keepdim=True) + 0.05 * torch.randn(512, 1, generator=gen)
    dataset = TensorDataset(features, targets)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=True), sampler


def _mp_fn(index, args):
    dist.init_process_group("gloo")
    device = torch.device("cpu")
    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss_fn = nn.MSELoss()

    loader, sampler = build_loader(rank, world_size, args.batch_size)
    train_loader = loader

    loss = None
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(train_loader):
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            if dist.is_initialized():
                for grad in [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]:
                    dist.all_reduce(grad, op=dist.ReduceOp.SUM)
                    grad.div_(dist.get_world_size())
            optimizer.step()  # all-reduce gradients, then step
        if int(os.environ.get("RANK", 0)) == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")

    # wait for every worker before the master writes the checkpoint
    dist.barrier()
    if int(os.environ.get("LOCAL_RANK", 0)) == 0:
        torch.save(tree_map_only(torch.Tensor, torch.Tensor.cpu, model.state_dict()), args.out)
    if dist.is_initialized():
        dist.barrier()
    if int(os.environ.get("LOCAL_RANK", 0)) == 0:
        print(f"checkpoint written to {args.out}")
    print(f"done: rank={rank} world={world_size}", flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--out", default="checkpoint.pt")
    return parser.parse_args()


if __name__ == "__main__":
    _mp_fn(int(os.environ.get("LOCAL_RANK", 0)), parse_args())
