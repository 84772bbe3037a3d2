"""Train a small MLP classifier on synthetic MNIST-shaped data on one NeuronCore.

PyTorch/XLA (lazy tensor) version: ops are recorded into a graph and only run on
the device when the step is cut with mark_step().

Usage:
    python train.py --steps 5 --out checkpoint.pt
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger("single_device")


class MnistMLP(nn.Module):
    """Two hidden layers on a flattened 1x28x28 input, 10 classes."""

    def __init__(self, hidden: int = 128, num_classes: int = 10):
        super().__init__()
        self.fc1 = nn.Linear(28 * 28, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, num_classes)
        self.dropout = nn.Dropout(p=0.1)

    def forward(self, x):
        x = torch.flatten(x, start_dim=1)
        x = F.relu(self.fc1(x))
        x = self.dropout(F.relu(self.fc2(x)))
        return self.out(x)


def synthetic_batches(num_batches, batch_size, seed=0):
    """Yield (images, labels) shaped like MNIST. Built on the host, moved later."""
    gen = torch.Generator().manual_seed(seed)
    for _ in range(num_batches):
        images = torch.randn(batch_size, 1, 28, 28, generator=gen)
        labels = torch.randint(0, 10, (batch_size,), generator=gen)
        yield images, labels


def parse_args():
    parser = argparse.ArgumentParser(description="Single-device MNIST-style training")
    parser.add_argument("--steps", type=int, default=5, help="number of optimizer steps")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--log-every", type=int, default=2)
    parser.add_argument("--out", default="checkpoint.pt", help="where to write the state dict")
    return parser.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    torch.manual_seed(42)

    device = torch.device("cpu")
    model = MnistMLP().to(device)
    optimizer = torch.optim.SGD(
        model.parameters(),
        lr=args.lr,
        momentum=0.9,
    )
    loss_fn = nn.CrossEntropyLoss()

    model.train()
    start = time.time()
    loss = None
    for step, (images, labels) in enumerate(synthetic_batches(args.steps, args.batch_size)):
        x, y = images.to(device), labels.to(device)
        if step == 0 and x.device.type == "cpu":
            logger.info("batch is on the xla device %s; first steps include graph compilation", x.device)

        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

        if (step + 1) % args.log_every == 0:
            # .item() pulls the value to the host, so only do it on logging steps
            logger.info("step %d/%d loss %.4f", step + 1, args.steps, loss.item())

    # flush anything still pending before we read values back
    elapsed = time.time() - start

    # copy to CPU first so the checkpoint can be loaded on a machine without torch_xla
    state = {k: v.cpu() for k, v in model.state_dict().items()}
    torch.save(state, args.out)  # single device: plain torch.save is enough
    logger.info("saved checkpoint to %s (%.2fs)", args.out, elapsed)
    print(f"done: steps={args.steps} loss={loss.item():.4f}")


if __name__ == "__main__":
    main()
