"""The native target of legacy/train_ckpt.py, written by hand."""

import os
import sys

import parallel_mesh
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import Replicate
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

FEATURES, HIDDEN, CLASSES, SAMPLES, GLOBAL_BATCH, EPOCHS, SAVE_AFTER = 12, 32, 5, 64, 16, 2, 5


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = parallelize_module(
            torch.nn.Linear(FEATURES, HIDDEN), parallel_mesh.tp_mesh(), ColwiseParallel()
        )
        self.fc2 = parallelize_module(
            torch.nn.Linear(HIDDEN, HIDDEN), parallel_mesh.tp_mesh(), RowwiseParallel()
        )
        self.out = parallelize_module(
            torch.nn.Linear(HIDDEN, CLASSES),
            parallel_mesh.tp_mesh(),
            ColwiseParallel(output_layouts=Replicate()),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(F.relu(self.fc2(F.relu(self.fc1(x)))))


def build(device: torch.device) -> tuple[nn.Module, torch.optim.Optimizer]:
    model = Net()
    model.to(device)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-2)


def train_step(model, optimizer, x, y) -> torch.Tensor:
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    parallel_mesh.reduce_gradients(optimizer)
    parallel_mesh.clip_grad_norm(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad()
    reported = parallel_mesh.all_reduce(loss.detach(), "dp")
    return reported / parallel_mesh.dp_mesh().size()


def main() -> None:
    checkpoint_dir = sys.argv[1]
    dist.init_process_group("gloo")
    parallel_mesh.init_mesh("cpu", tensor_parallel_size=int(os.environ.get("TP", "1")))
    assert parallel_mesh.is_initialized()
    torch.manual_seed(0)
    device = torch.device("cpu")
    model, optimizer = build(device)

    gen = torch.Generator().manual_seed(11)
    dataset = TensorDataset(
        torch.randn(SAMPLES, FEATURES, generator=gen),
        torch.randint(0, CLASSES, (SAMPLES,), generator=gen),
    )
    dp_size = parallel_mesh.dp_mesh().size()
    sampler = DistributedSampler(
        dataset,
        num_replicas=dp_size,
        rank=parallel_mesh.dp_mesh().get_local_rank(),
        shuffle=False,
    )
    loader = DataLoader(dataset, batch_size=GLOBAL_BATCH // dp_size, sampler=sampler)
    batches = [(x.to(device), y.to(device)) for _ in range(EPOCHS) for x, y in loader]

    for step, (x, y) in enumerate(batches):
        loss = train_step(model, optimizer, x, y)
        if dist.get_rank() == 0:
            print(f"LOSS {step} {loss.item():.8f}")
        if step + 1 == SAVE_AFTER:
            parallel_mesh.save_checkpoint(
                checkpoint_dir,
                "step5",
                model=model,
                optimizer=optimizer,
                user_content={"step": step},
            )

    # the round trip: a fresh model and optimizer resume from the checkpoint and replay the rest
    model, optimizer = build(device)
    user_content = parallel_mesh.load_checkpoint(
        checkpoint_dir, "step5", model=model, optimizer=optimizer
    )
    for step in range(user_content["step"] + 1, len(batches)):
        loss = train_step(model, optimizer, *batches[step])
        if dist.get_rank() == 0:
            print(
                f"RESUMED {step} {loss.item():.8f} tp_rank={parallel_mesh.tp_mesh().get_local_rank()}"
            )
    dist.barrier()
    parallel_mesh.destroy()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
