"""A torchrun DDP script written for GPUs: nccl, set_device, device_ids, GradScaler, autocast.
tests/test_cuda_pack.py migrates it for the cpu target and runs it with two processes; each rank
saves its parameters so that the test can check they are identical."""

import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main(out_dir: str, steps: int = 30) -> None:
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    rank = dist.get_rank()
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)).to(device)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler()

    generator = torch.Generator().manual_seed(1234 + rank)  # each rank its own data
    losses = []
    for _ in range(steps):
        x = torch.randn(32, 8, generator=generator).cuda(local_rank)
        y = x.mean(dim=1, keepdim=True)
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = nn.functional.mse_loss(model(x).float(), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    torch.cuda.synchronize()
    state = {k: v.detach().cpu() for k, v in model.module.state_dict().items()}
    torch.save({"params": state, "losses": losses}, os.path.join(out_dir, f"rank{rank}.pt"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
