"""Load the last checkpoint on a CPU-only machine and report the loss."""

import argparse
import os

import torch

from net import Regressor, make_data

parser = argparse.ArgumentParser()
parser.add_argument("--ckpt-dir", default="ckpt")
args = parser.parse_args()

state = torch.load(os.path.join(args.ckpt_dir, "last.pt"))
model = Regressor()
model.load_state_dict(state["model"])
x, y = make_data()
with torch.no_grad():
    loss = torch.nn.functional.mse_loss(model(x), y)
print(f"eval epoch {state['epoch']} loss {loss.item():.4f}")
