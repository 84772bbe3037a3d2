"""Train with periodic checkpoints written by xm.save, resuming from the last one.

    python train.py --epochs 3 --ckpt-dir ckpt   (torch_xla.launch starts one process per core)
    python evaluate.py --ckpt-dir ckpt           (on any CPU machine)
"""

import argparse
import os

import torch
import torch.nn as nn

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from net import Regressor, make_data


def _mp_fn(index, args):
    device = xm.xla_device()
    rank, world_size = xr.global_ordinal(), xr.world_size()
    torch.manual_seed(0)
    model = Regressor().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    start_epoch = 0

    last = os.path.join(args.ckpt_dir, "last.pt")
    if os.path.exists(last):
        state = torch.load(last)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_epoch = state["epoch"] + 1
        xm.master_print(f"resumed from epoch {state['epoch']}")

    x, y = make_data()
    x, y = x[rank::world_size], y[rank::world_size]
    for epoch in range(start_epoch, start_epoch + args.epochs):
        perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(epoch))
        for i in range(0, len(x), 16):
            idx = perm[i:i + 16]
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x[idx].to(device)), y[idx].to(device))
            loss.backward()
            xm.optimizer_step(optimizer)
        xm.master_print(f"epoch {epoch} loss {loss.item():.4f}")
        os.makedirs(args.ckpt_dir, exist_ok=True)
        xm.save(
            {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
            last,
        )
        xm.rendezvous("checkpoint_saved")

    checksum = sum(p.detach().cpu().sum().item() for p in model.parameters())
    print(f"param checksum rank={rank}: {checksum:.8f}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--ckpt-dir", default="ckpt")
    torch_xla.launch(_mp_fn, args=(parser.parse_args(),))
