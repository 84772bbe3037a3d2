"""Data parallel by hand: gradients all-reduced explicitly, metrics reduced over replicas.

    torchrun --nproc_per_node=2 train_allreduce.py
"""

import torch
import torch.distributed as dist
import torch.nn as nn

import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401
import torch_xla.runtime as xr


def shard(rank, world_size, n=480, features=10):
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(n, features, generator=gen)
    y = (x[:, 0] * x[:, 1] > 0).long()
    return x[rank::world_size], y[rank::world_size]


def evaluate(model, x, y, device):
    model.eval()
    with torch.no_grad():
        pred = model(x.to(device)).argmax(-1)
        correct = (pred == y.to(device)).sum()
    accuracy = correct.item() / len(y)
    # every replica gets the mean of the replicas' accuracies
    mean_acc = xm.mesh_reduce("eval_accuracy", accuracy, lambda values: sum(values) / len(values))
    counts = xm.all_gather(torch.tensor([len(y)], device=device), dim=0)
    model.train()
    return mean_acc, counts


def main():
    dist.init_process_group("xla", init_method="xla://")
    device = xm.xla_device()
    world_size = xr.world_size()
    rank = xr.global_ordinal()
    xm.master_print(f"{xr.global_runtime_device_count()} devices, world size {world_size}")

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
    loss_fn = nn.CrossEntropyLoss()
    x, y = shard(rank, world_size)

    for epoch in range(8):
        for i in range(0, len(x), 30):
            xb, yb = x[i:i + 30].to(device), y[i:i + 30].to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            grads = [p.grad for p in model.parameters() if p.grad is not None]
            xm.all_reduce(xm.REDUCE_SUM, grads, scale=1.0 / world_size)
            optimizer.step()
            xm.mark_step()
        global_loss = xm.all_reduce(xm.REDUCE_SUM, loss.detach()) / world_size
        acc, counts = evaluate(model, x, y, device)
        xm.master_print(f"epoch {epoch} loss {global_loss.item():.4f} acc {acc:.3f} n={counts.tolist()}")

    xm.rendezvous("training_done")
    checksum = sum(p.detach().cpu().sum().item() for p in model.parameters())
    print(f"param checksum rank={rank}: {checksum:.8f}", flush=True)


if __name__ == "__main__":
    main()
