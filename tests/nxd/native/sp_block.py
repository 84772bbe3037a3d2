"""The native target of legacy/sp_block.py, written by hand."""

import os

import parallel_mesh
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import Shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    SequenceParallel,
    parallelize_module,
)

VOCAB, HIDDEN, LAYERS, SEQ, BATCH, STEPS = 40, 32, 2, 8, 4, 5


class SequenceParallelBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln = parallelize_module(
            torch.nn.LayerNorm(HIDDEN),
            parallel_mesh.tp_mesh(),
            SequenceParallel(sequence_dim=0, use_local_output=True),
        )
        self.up = parallelize_module(
            torch.nn.Linear(HIDDEN, 4 * HIDDEN),
            parallel_mesh.tp_mesh(),
            ColwiseParallel(input_layouts=Shard(0)),
        )
        self.down = parallelize_module(
            torch.nn.Linear(4 * HIDDEN, HIDDEN),
            parallel_mesh.tp_mesh(),
            RowwiseParallel(output_layouts=Shard(0)),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(F.gelu(self.up(self.ln(x))))


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.blocks = nn.ModuleList(SequenceParallelBlock() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens).transpose(0, 1).contiguous()  # [seq, batch, hidden]
        x = parallel_mesh.scatter_to_sequence_parallel_region(x)
        for block in self.blocks:
            x = block(x)
        x = parallel_mesh.gather_from_sequence_parallel_region(x, to_model_parallel=False)
        return self.head(self.norm(x.transpose(0, 1)))


def main() -> None:
    dist.init_process_group("gloo")
    config = parallel_mesh.training_config(
        "cpu",
        tensor_parallel_size=int(os.environ.get("TP", "1")),
        sequence_parallel=True,
    )
    torch.manual_seed(0)
    model = fully_shard(Model(), mesh=parallel_mesh.dp_mesh())
    optimizer = parallel_mesh.clip_grad_norm_before_step(
        torch.optim.AdamW(model.parameters(), lr=1e-2), config
    )
    device = torch.device("cpu")
    dp_rank = parallel_mesh.dp_mesh().get_local_rank()
    dp_size = parallel_mesh.dp_mesh().size()
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=torch.Generator().manual_seed(5))
    for step in range(STEPS):
        batch = tokens[dp_rank::dp_size].to(device)
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        reported = loss.detach().clone()
        dist.all_reduce(reported, group=parallel_mesh.dp_mesh().get_group())
        if dist.get_rank() == 0:
            print(f"LOSS {step} {reported.item() / dp_size:.8f}")

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
