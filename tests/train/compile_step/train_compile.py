"""A training step compiled whole with torch_xla.compile (pytorch/xla example style).

    python train_compile.py
"""

import itertools
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class TrainRegressionBase:

    def __init__(self):
        self.batch_size = 32
        self.num_steps = 40
        self.num_epochs = 5

        gen = torch.Generator().manual_seed(3)
        x = torch.randn(512, 24, generator=gen)
        y = torch.sin(x[:, :4]).sum(1, keepdim=True) + 0.1 * x[:, 4:5]
        train_loader = DataLoader(TensorDataset(x, y), batch_size=self.batch_size, shuffle=True)

        self.device = torch_xla.device()
        self.train_device_loader = pl.MpDeviceLoader(train_loader, self.device)
        torch.manual_seed(0)
        self.model = nn.Sequential(nn.Linear(24, 64), nn.GELU(), nn.Linear(64, 1)).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=3e-3)
        self.loss_fn = nn.MSELoss()
        self.compiled_step_fn = torch_xla.compile(
            self.step_fn, full_graph=True, name="regression_step_fn")

    def _train_update(self, step, loss, epoch):
        print(f"epoch: {epoch}, step: {step}, loss: {loss.item():.4f}")

    def run_optimizer(self):
        self.optimizer.step()

    def step_fn(self, data, target):
        self.optimizer.zero_grad()
        output = self.model(data)
        loss = self.loss_fn(output, target)
        loss.backward()
        self.run_optimizer()
        return loss

    def train_loop_fn(self, loader, epoch):
        self.model.train()
        loader = itertools.islice(loader, self.num_steps)
        for step, (data, target) in enumerate(loader):
            loss = self.compiled_step_fn(data, target)
            if step % 8 == 0:
                xm.add_step_closure(self._train_update, args=(step, loss, epoch))

    def start_training(self):
        for epoch in range(1, self.num_epochs + 1):
            start = time.time()
            self.train_loop_fn(self.train_device_loader, epoch)
            xm.master_print(f"Epoch {epoch} train end {time.time() - start:.2f}s")
        xm.wait_device_ops()
        checksum = sum(p.detach().cpu().sum().item() for p in self.model.parameters())
        print(f"param checksum rank=0: {checksum:.8f}")


if __name__ == "__main__":
    base = TrainRegressionBase()
    base.start_training()
