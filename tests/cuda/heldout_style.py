# A GPU-era script in the style of real repositories. Every line that only works on NVIDIA
# GPUs, or that the Neuron compiler rejects, ends with the marker `# CUDA`; tests/test_cuda_pack.py
# checks that exactly those lines get a finding. This file is read, never run.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from apex.optimizers import FusedAdam  # CUDA
from flash_attn import flash_attn_func  # CUDA
from torch import nn
from torch.nn.parallel import DistributedDataParallel

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"  # CUDA
torch.backends.cudnn.benchmark = True  # CUDA
torch.backends.cuda.matmul.allow_tf32 = True  # CUDA
DEFAULT_DEVICE = "cuda:0"  # CUDA


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x, fused=False):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        if fused:
            return flash_attn_func(q, k, v, causal=True)  # CUDA
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class Mixer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.mha = nn.MultiheadAttention(dim, 4, batch_first=True)

    def forward(self, x, mask=None):
        if mask is None:
            return self.mha(x, x, x, need_weights=False)[0]
        return self.mha(x, x, x, attn_mask=mask, need_weights=False)[0]  # CUDA


def route(logits, top_k):
    weights, experts = torch.topk(logits.softmax(-1), top_k, dim=-1)
    order = torch.argsort(experts.flatten(), stable=True)  # CUDA
    return weights, experts, order


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--device", default="cuda")  # CUDA
    args = parser.parse_args()
    dist.init_process_group("nccl")  # CUDA
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)  # CUDA
    torch.cuda.manual_seed(0)  # CUDA
    model = Block(64).cuda()  # CUDA
    model = DistributedDataParallel(model, device_ids=[local_rank])  # CUDA
    optimizer = FusedAdam(model.parameters(), lr=1e-3)  # CUDA
    scaler = torch.cuda.amp.GradScaler()  # CUDA
    data = torch.utils.data.TensorDataset(torch.randn(64, 8, 64))
    loader = torch.utils.data.DataLoader(data, batch_size=4, pin_memory=True)
    torch.cuda.nvtx.range_push("train")  # CUDA
    for step, (x,) in enumerate(loader):
        x = x.to(f"cuda:{local_rank}", non_blocking=True)  # CUDA
        with torch.autocast(device_type="cuda", dtype=torch.float16):  # CUDA
            loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        if step == args.steps:
            break
    torch.cuda.nvtx.range_pop()  # CUDA
    if args.device == "cuda":  # CUDA
        torch.cuda.synchronize()  # CUDA
    print(torch.cuda.max_memory_allocated())  # CUDA
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
