"""A sequence-parallel transformer MLP block (legacy NxD style). Never run as-is.

NxD's sequence parallelism keeps activations as [sequence, batch, hidden] and splits the sequence
(dimension 0) across the tensor-parallel ranks outside the column / row parallel pair.
"""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm
from neuronx_distributed.parallel_layers import (
    ColumnParallelLinear,
    RowParallelLinear,
    parallel_state,
)
from neuronx_distributed.parallel_layers.layer_norm import LayerNorm
from neuronx_distributed.parallel_layers.mappings import (
    gather_from_sequence_parallel_region,
    scatter_to_sequence_parallel_region,
)
from neuronx_distributed.trainer import (
    initialize_parallel_model,
    initialize_parallel_optimizer,
    neuronx_distributed_config,
)

VOCAB, HIDDEN, LAYERS, SEQ, BATCH, STEPS = 40, 32, 2, 8, 4, 5


class SequenceParallelBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln = LayerNorm(HIDDEN, sequence_parallel_enabled=True)
        self.up = ColumnParallelLinear(
            HIDDEN, 4 * HIDDEN, gather_output=False, sequence_parallel_enabled=True
        )
        self.down = RowParallelLinear(
            4 * HIDDEN, HIDDEN, input_is_parallel=True, sequence_parallel_enabled=True
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
        x = scatter_to_sequence_parallel_region(x)
        for block in self.blocks:
            x = block(x)
        x = gather_from_sequence_parallel_region(x, to_model_parallel=False)
        return self.head(self.norm(x.transpose(0, 1)))


def main() -> None:
    dist.init_process_group("xla")
    config = neuronx_distributed_config(
        tensor_parallel_size=int(os.environ.get("TP", "1")),
        sequence_parallel=True,
    )
    torch.manual_seed(0)
    model = initialize_parallel_model(config, Model)
    optimizer = initialize_parallel_optimizer(
        config, torch.optim.AdamW, model.parameters(), lr=1e-2
    )
    device = xm.xla_device()
    dp_rank = parallel_state.get_data_parallel_rank()
    dp_size = parallel_state.get_data_parallel_size()
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=torch.Generator().manual_seed(5))
    for step in range(STEPS):
        batch = tokens[dp_rank::dp_size].to(device)
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        xm.mark_step()
        reported = loss.detach().clone()
        dist.all_reduce(reported, group=parallel_state.get_data_parallel_group())
        if dist.get_rank() == 0:
            print(f"LOSS {step} {reported.item() / dp_size:.8f}")

    xm.rendezvous("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
