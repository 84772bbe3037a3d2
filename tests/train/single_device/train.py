"""Train a small MLP classifier on one NeuronCore with PyTorch/XLA.

    python train.py

Lazy mode: every op is recorded and compiled when the step is marked.
"""

import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

EPOCHS = 6
BATCH_SIZE = 32
LEARNING_RATE = 0.1


class MLP(nn.Module):
    def __init__(self, input_size=20, layers=(64, 32), classes=4):
        super().__init__()
        self.fc1 = nn.Linear(input_size, layers[0])
        self.fc2 = nn.Linear(layers[0], layers[1])
        self.fc3 = nn.Linear(layers[1], classes)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return F.log_softmax(self.fc3(x), dim=1)


def synthetic_classification(n=512, features=20, classes=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=gen)
    w = torch.randn(features, classes, generator=gen)
    return TensorDataset(x, (x @ w).argmax(dim=1))


def main():
    torch.manual_seed(0)
    device = xm.xla_device()
    model = MLP().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=0.9)
    loss_fn = nn.NLLLoss()

    train_loader = DataLoader(synthetic_classification(), batch_size=BATCH_SIZE, shuffle=True)
    train_device_loader = pl.MpDeviceLoader(train_loader, device)

    print("----------Training ---------------")
    model.train()
    for epoch in range(EPOCHS):
        start = time.time()
        running = torch.zeros((), device=device)
        for idx, (train_x, train_label) in enumerate(train_device_loader):
            optimizer.zero_grad()
            output = model(train_x)
            loss = loss_fn(output, train_label)
            loss.backward()
            xm.optimizer_step(optimizer, barrier=True)  # single device: step and cut the graph
            running += loss.detach()
        print(f"epoch {epoch} loss {running.item() / (idx + 1):.4f} time {time.time() - start:.2f}s")

    # xm.save moves the tensors to the CPU before writing
    os.makedirs("checkpoints", exist_ok=True)
    xm.save({"state_dict": model.state_dict()}, "checkpoints/checkpoint.pt")
    checksum = sum(p.detach().cpu().sum().item() for p in model.parameters())
    print(f"param checksum rank=0: {checksum:.8f}")
    print("----------End Training ---------------")


if __name__ == "__main__":
    main()
