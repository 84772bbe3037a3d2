"""Data parallel over two hosts of two cores each, written against torch_xla's collectives.

Even epochs reduce gradients hierarchically (within the host, then across hosts, with XLA
replica groups); odd epochs take a ZeRO-1 style step: gradients reduce-scattered, each replica
updates its shard of the flat parameters, the shards are gathered back.

    torchrun --nproc_per_node=4 train_hierarchical.py
"""

import torch
import torch.distributed as dist
import torch.nn as nn

import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401
import torch_xla.runtime as xr

LR = 0.05


def batches(rank, steps=10, batch=16):
    gen = torch.Generator().manual_seed(1000 + rank)
    for _ in range(steps):
        x = torch.randn(batch, 8, generator=gen)
        y = torch.tanh(x[:, :1] - 0.5 * x[:, 1:2])
        yield x, y


def flat_params(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def load_flat(model, flat):
    offset = 0
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(flat[offset : offset + p.numel()].view_as(p))
            offset += p.numel()


def sharded_step(model, world, rank):
    """ZeRO-1 by hand: each replica owns 1/world of the flat parameters."""
    grads = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    params = flat_params(model)
    pad = (-grads.numel()) % world
    grads = torch.cat([grads, grads.new_zeros(pad)])
    params = torch.cat([params, params.new_zeros(pad)])
    grad_shard = xm.reduce_scatter(xm.REDUCE_SUM, grads, 1.0 / world, 0, world)
    size = grad_shard.numel()
    new_shard = params[rank * size : (rank + 1) * size] - LR * grad_shard
    full = xm.all_gather(new_shard, dim=0)
    load_flat(model, full[: full.numel() - pad])


def main():
    dist.init_process_group("xla", init_method="xla://")
    device = xm.xla_device()
    rank, world = xr.global_ordinal(), xr.world_size()
    assert world == 4, "two hosts of two cores"

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()

    for epoch in range(6):
        for x, y in batches(rank):
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            if epoch % 2 == 0:
                # sum over the host's cores (xm divides by the world size), then across hosts
                xm.reduce_gradients(optimizer, groups=[[0, 1], [2, 3]])
                grads = [p.grad for p in model.parameters()]
                xm.all_reduce(xm.REDUCE_SUM, grads, groups=[[0, 2], [1, 3]])
                optimizer.step()
            else:
                sharded_step(model, world, rank)
            xm.mark_step()
        host_loss = xm.all_reduce(xm.REDUCE_SUM, loss.detach(), scale=0.5, groups=[[0, 1], [2, 3]])
        worst = xm.all_reduce("max", host_loss, groups=[[0, 2], [1, 3]])
        xm.master_print(f"epoch {epoch} loss {worst.item():.5f}")

    xm.rendezvous("training_done")
    checksum = sum(p.detach().cpu().sum().item() for p in model.parameters())
    print(f"param checksum rank={rank}: {checksum:.8f}", flush=True)


if __name__ == "__main__":
    main()
