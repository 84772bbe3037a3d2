"""Train a tiny regression MLP with the PyTorch/XLA 2.x step API.

Uses torch_xla.device(), torch_xla.compile() around the train step, and
torch_xla.step() around each evaluation step, with bf16 autocast.

Usage:
    python train.py --steps 5 [--dynamo]
"""
import argparse
import logging

import torch
import torch.nn as nn

import torch_xla

logger = logging.getLogger(__name__)


class Regressor(nn.Module):
    """Plain MLP that predicts a scalar per row."""

    def __init__(self, in_features: int = 16, hidden: int = 64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.GELU(),
            nn.Linear(hidden, hidden),
            nn.GELU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


def make_dataset(n: int, in_features: int, seed: int):
    """Synthetic linear target y = x @ w + noise, placed on the device."""
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(in_features, generator=gen)
    x = torch.randn(n, in_features, generator=gen)
    y = x @ w + 0.1 * torch.randn(n, generator=gen)
    return x.to("neuron"), y.to("neuron")


def parse_args():
    parser = argparse.ArgumentParser(description="torch_xla.compile / torch_xla.step example")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--eval-batches", type=int, default=2)
    parser.add_argument("--dynamo", action="store_true",
                        help="evaluate through torch.compile (openxla backend)")
    return parser.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    torch.manual_seed(0)

    device = torch.device("neuron")
    model = Regressor(args.features).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    loss_fn = nn.MSELoss()

    def step_fn(x, y):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("neuron", dtype=torch.bfloat16):
            pred = model(x)
        loss = loss_fn(pred.float(), y)  # loss in fp32
        loss.backward()
        optimizer.step()
        return loss

    compiled = torch_xla.compile(step_fn)

    n_train = args.steps * args.batch_size
    n_eval = args.eval_batches * args.batch_size
    x_all, y_all = make_dataset(n_train + n_eval, args.features, seed=1)

    model.train()
    losses = []
    for step in range(args.steps):
        lo, hi = step * args.batch_size, (step + 1) * args.batch_size
        losses.append(compiled(x_all[lo:hi], y_all[lo:hi]))
    logger.info("train losses: %s", ", ".join(f"{l.item():.4f}" for l in losses))

    eval_model = model
    if args.dynamo:
        eval_model = torch.compile(model, backend="neuron", dynamic=False)

    model.eval()
    total = torch.zeros((), device="neuron")
    with torch.no_grad():
        for i in range(args.eval_batches):
            lo = n_train + i * args.batch_size
            xb, yb = x_all[lo:lo + args.batch_size], y_all[lo:lo + args.batch_size]
            total += loss_fn(eval_model(xb), yb)
    eval_loss = (total / args.eval_batches).item()

    print(f"done: steps={args.steps} loss={losses[-1].item():.4f} eval_loss={eval_loss:.4f}")


if __name__ == "__main__":
    main()
