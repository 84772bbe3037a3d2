"""Data-parallel MLP training launched with torchrun, one process per NeuronCore.

    torchrun --nproc_per_node=2 train_torchrun.py
"""

import os
import time

import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from model import MLP

# XLA imports
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401  registers the "xla" backend

torch.distributed.init_process_group('xla')

# Global constants
EPOCHS = 5
WARMUP_STEPS = 2
BATCH_SIZE = 16


def make_dataset(n=640, features=32, classes=5):
    gen = torch.Generator().manual_seed(42)
    x = torch.randn(n, features, generator=gen)
    proj = torch.randn(features, classes, generator=gen)
    return TensorDataset(x, (x @ proj).argmax(dim=-1))


train_dataset = make_dataset()


def main():
    # XLA MP: get world size
    world_size = xm.xrt_world_size()
    # multi-processing: ensure each worker has same initial weights
    torch.manual_seed(0)

    # Move model to device and declare optimizer and loss function
    device = 'xla'
    model = MLP().to(device)
    # For multiprocessing, scale up learning rate
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02 * world_size)
    loss_fn = torch.nn.NLLLoss()

    # Prepare data loader
    train_sampler = None
    if world_size > 1:
        train_sampler = DistributedSampler(
            train_dataset, num_replicas=world_size, rank=xm.get_ordinal(), shuffle=True
        )
    train_loader = DataLoader(
        train_dataset,
        batch_size=BATCH_SIZE,
        sampler=train_sampler,
        shuffle=False if train_sampler else True,
    )
    # XLA MP: use MpDeviceLoader from torch_xla.distributed
    train_device_loader = pl.MpDeviceLoader(train_loader, device)

    # Run the training loop
    print('----------Training ---------------')
    model.train()
    for epoch in range(EPOCHS):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        start = time.time()
        for idx, (train_x, train_label) in enumerate(train_device_loader):
            optimizer.zero_grad()
            train_x = train_x.view(train_x.size(0), -1)
            output = model(train_x)
            loss = loss_fn(output, train_label)
            loss.backward()
            xm.optimizer_step(optimizer)  # XLA MP: performs grad allreduce and optimizer step
            if idx < WARMUP_STEPS:  # skip warmup iterations
                start = time.time()
        interval = idx - WARMUP_STEPS
        throughput = interval / (time.time() - start)
        xm.master_print(f"epoch {epoch} loss {loss.item():.4f} throughput {throughput:.1f}")

    # Save checkpoint for evaluation (xm.save ensures only one process saves)
    os.makedirs("checkpoints", exist_ok=True)
    checkpoint = {'state_dict': model.state_dict()}
    xm.save(checkpoint, 'checkpoints/checkpoint.pt')

    checksum = sum(p.detach().cpu().sum().item() for p in model.parameters())
    print(f"param checksum rank={xm.get_ordinal()}: {checksum:.8f}", flush=True)
    print('----------End Training ---------------')


if __name__ == '__main__':
    main()
