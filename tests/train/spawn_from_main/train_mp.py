"""Multi-core classifier in the style of the PyTorch/XLA examples: nested loop functions, a rate
tracker, step closures for logging, and an accuracy averaged over the replicas.

    python train_mp.py --num-epochs 4
"""

import argparse
import statistics

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp


def _train_update(device, step, loss, tracker, epoch):
    print(
        f"[{device}] epoch {epoch} step {step} loss: {loss.item():.4f} "
        f"rate {tracker.rate():.1f} global {tracker.global_rate():.1f}"
    )


def make_loaders(flags):
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(600, 12, generator=gen)
    y = (x[:, 0] + x[:, 1] - x[:, 2] > 0).long()
    train_ds, test_ds = TensorDataset(x[:480], y[:480]), TensorDataset(x[480:], y[480:])
    train_sampler = DistributedSampler(
        train_ds, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal(), shuffle=True
    )
    train_loader = DataLoader(train_ds, batch_size=flags.batch_size, sampler=train_sampler)
    test_loader = DataLoader(test_ds, batch_size=flags.batch_size)
    return train_loader, test_loader


def train_model(flags):
    torch.manual_seed(1)
    train_loader, test_loader = make_loaders(flags)
    device = xm.xla_device()
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=flags.lr, momentum=0.5)
    loss_fn = nn.CrossEntropyLoss()

    def train_loop_fn(loader, epoch):
        tracker = xm.RateTracker()
        model.train()
        for step, (data, target) in enumerate(loader):
            optimizer.zero_grad()
            loss = loss_fn(model(data), target)
            loss.backward()
            xm.optimizer_step(optimizer)
            tracker.add(flags.batch_size)
            if step % flags.log_steps == 0:
                xm.add_step_closure(_train_update, args=(device, step, loss, tracker, epoch))

    def test_loop_fn(loader):
        correct, total = 0, 0
        model.eval()
        for data, target in loader:
            pred = model(data).argmax(1)
            correct += pred.eq(target).sum()
            total += data.size(0)
        accuracy = 100.0 * correct.item() / total
        accuracy = xm.mesh_reduce("test_accuracy", accuracy, statistics.mean)
        return accuracy

    train_device_loader = pl.MpDeviceLoader(train_loader, device)
    test_device_loader = pl.MpDeviceLoader(test_loader, device)
    for epoch in range(1, flags.num_epochs + 1):
        train_loop_fn(train_device_loader, epoch)
        accuracy = test_loop_fn(test_device_loader)
        xm.master_print(f"Epoch {epoch} test accuracy={accuracy:.2f}")
    checksum = sum(p.detach().cpu().sum().item() for p in model.parameters())
    print(f"param checksum rank={xm.get_ordinal()}: {checksum:.8f}", flush=True)


def _mp_fn(index, flags):
    torch.set_default_dtype(torch.float32)
    train_model(flags)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--log-steps", type=int, default=10)
    xmp.spawn(_mp_fn, args=(parser.parse_args(),))


if __name__ == "__main__":
    main()
