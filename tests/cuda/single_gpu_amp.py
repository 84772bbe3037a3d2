"""A single-GPU training script written the CUDA way: AMP with a gradient scaler, cuDNN
flags, `.cuda()`, CUDA seeds and memory statistics. tests/test_cuda_pack.py migrates it with
`--extend-select NMC --fix --unsafe-fixes --target-device cpu` and runs the result."""

import sys

import torch
import torch.backends.cudnn as cudnn
from torch import nn
from torch.cuda.amp import GradScaler, autocast

torch.backends.cudnn.benchmark = True
cudnn.deterministic = True
torch.backends.cuda.matmul.allow_tf32 = True

torch.manual_seed(0)
torch.cuda.manual_seed_all(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.body(x)


def main(steps: int = 60) -> None:
    model = Net().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = GradScaler()
    inputs = torch.randn(256, 16)
    targets = inputs.sum(dim=1, keepdim=True) * 0.1
    losses = []
    for _ in range(steps):
        x = inputs.cuda(non_blocking=True)
        y = targets.to("cuda")
        optimizer.zero_grad()
        with autocast():
            loss = nn.functional.mse_loss(model(x).float(), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    torch.cuda.synchronize()
    print(f"peak memory {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")
    print(f"first loss {losses[0]:.4f} last loss {losses[-1]:.4f}")
    sys.exit(0 if losses[-1] < losses[0] else 1)


if __name__ == "__main__":
    main()
