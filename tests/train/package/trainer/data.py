import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

import torch_xla.distributed.parallel_loader as pl


def build_train_loader(device, rank, world_size, batch_size=16):
    gen = torch.Generator().manual_seed(21)
    features = torch.randn(400, 12, generator=gen)
    targets = (features[:, :6].sum(1) > features[:, 6:].sum(1)).float().unsqueeze(1)
    dataset = TensorDataset(features, targets)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    # MpDeviceLoader can be iterated once per epoch (a per_device_loader only once)
    return pl.MpDeviceLoader(loader, device), sampler
