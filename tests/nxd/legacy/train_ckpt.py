"""A tensor + data parallel training script with a checkpoint round trip (legacy NxD style).

initialize_model_parallel, per-rank dropout seeds, data-parallel sampling, the gradient all-reduce
over the data-parallel groups, clipping, and save_checkpoint / load_checkpoint. Never run as-is.
"""

import os
import sys

import neuronx_distributed as nxd
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm
from neuronx_distributed.parallel_layers import grads, parallel_state
from neuronx_distributed.parallel_layers.layers import ColumnParallelLinear, RowParallelLinear
from neuronx_distributed.parallel_layers.random import model_parallel_xla_manual_seed
from neuronx_distributed.utils.model_utils import move_model_to_device
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

FEATURES, HIDDEN, CLASSES, SAMPLES, GLOBAL_BATCH, EPOCHS, SAVE_AFTER = 12, 32, 5, 64, 16, 2, 5


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = ColumnParallelLinear(FEATURES, HIDDEN, gather_output=False)
        self.fc2 = RowParallelLinear(HIDDEN, HIDDEN, input_is_parallel=True)
        self.out = ColumnParallelLinear(HIDDEN, CLASSES, gather_output=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(F.relu(self.fc2(F.relu(self.fc1(x)))))


def build(device: torch.device) -> tuple[nn.Module, torch.optim.Optimizer]:
    model = Net()
    move_model_to_device(model, device)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-2)


def train_step(model, optimizer, x, y) -> torch.Tensor:
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    xm.reduce_gradients(optimizer, groups=parallel_state.get_data_parallel_replica_groups())
    grads.clip_grad_norm(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad()
    xm.mark_step()
    reported = xm.all_reduce(
        xm.REDUCE_SUM, loss.detach(), groups=parallel_state.get_data_parallel_replica_groups()
    )
    return reported / parallel_state.get_data_parallel_size()


def main() -> None:
    checkpoint_dir = sys.argv[1]
    dist.init_process_group("xla")
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=int(os.environ.get("TP", "1"))
    )
    assert parallel_state.model_parallel_is_initialized()
    model_parallel_xla_manual_seed(0)
    device = xm.xla_device()
    model, optimizer = build(device)

    gen = torch.Generator().manual_seed(11)
    dataset = TensorDataset(
        torch.randn(SAMPLES, FEATURES, generator=gen),
        torch.randint(0, CLASSES, (SAMPLES,), generator=gen),
    )
    dp_size = parallel_state.get_data_parallel_size()
    sampler = DistributedSampler(
        dataset,
        num_replicas=dp_size,
        rank=parallel_state.get_data_parallel_rank(),
        shuffle=False,
    )
    loader = DataLoader(dataset, batch_size=GLOBAL_BATCH // dp_size, sampler=sampler)
    batches = [(x.to(device), y.to(device)) for _ in range(EPOCHS) for x, y in loader]

    for step, (x, y) in enumerate(batches):
        loss = train_step(model, optimizer, x, y)
        if dist.get_rank() == 0:
            print(f"LOSS {step} {loss.item():.8f}")
        if step + 1 == SAVE_AFTER:
            nxd.save_checkpoint(
                checkpoint_dir,
                "step5",
                model=model,
                optimizer=optimizer,
                user_content={"step": step},
            )

    # the round trip: a fresh model and optimizer resume from the checkpoint and replay the rest
    model, optimizer = build(device)
    user_content = nxd.load_checkpoint(checkpoint_dir, "step5", model=model, optimizer=optimizer)
    for step in range(user_content["step"] + 1, len(batches)):
        loss = train_step(model, optimizer, *batches[step])
        if dist.get_rank() == 0:
            print(
                f"RESUMED {step} {loss.item():.8f} tp_rank={parallel_state.get_tensor_model_parallel_rank()}"
            )
    xm.rendezvous("done")
    parallel_state.destroy_model_parallel()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
