"""A GPT-like language model with NeuronX Distributed tensor parallelism (legacy NxD style).

Never run as-is (NxD is not installed here): tests migrate it and run the result.
TP comes from the environment; the data-parallel size is the world size divided by TP.
"""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm
from neuronx_distributed.parallel_layers import (
    ColumnParallelLinear,
    ParallelEmbedding,
    RowParallelLinear,
    parallel_state,
)
from neuronx_distributed.parallel_layers.utils import divide
from neuronx_distributed.trainer import (
    initialize_parallel_model,
    initialize_parallel_optimizer,
    neuronx_distributed_config,
)

VOCAB, HIDDEN, HEADS, LAYERS, SEQ, BATCH, STEPS = 64, 32, 4, 2, 16, 8, 6


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        tp_size = parallel_state.get_tensor_model_parallel_size()
        # each rank owns HEADS / TP heads
        self.local_heads = divide(HEADS, tp_size)
        self.head_dim = HIDDEN // HEADS
        self.query = ColumnParallelLinear(HIDDEN, HIDDEN, gather_output=False)
        self.key = ColumnParallelLinear(HIDDEN, HIDDEN, gather_output=False)
        self.value = ColumnParallelLinear(HIDDEN, HIDDEN, gather_output=False)
        self.dense = RowParallelLinear(HIDDEN, HIDDEN, input_is_parallel=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        shape = (b, s, self.local_heads, self.head_dim)
        q = self.query(x).view(shape).transpose(1, 2)
        k = self.key(x).view(shape).transpose(1, 2)
        v = self.value(x).view(shape).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out = out.transpose(1, 2).reshape(b, s, self.local_heads * self.head_dim)
        return self.dense(out)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = ColumnParallelLinear(HIDDEN, 4 * HIDDEN, bias=True, gather_output=False)
        self.down = RowParallelLinear(4 * HIDDEN, HIDDEN, bias=True, input_is_parallel=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(HIDDEN)
        self.attn = Attention()
        self.ln2 = nn.LayerNorm(HIDDEN)
        self.mlp = MLP()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = ParallelEmbedding(VOCAB, HIDDEN)
        self.pos = nn.Embedding(SEQ, HIDDEN)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(HIDDEN)
        self.lm_head = ColumnParallelLinear(HIDDEN, VOCAB, bias=False, gather_output=True)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.pos(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def main() -> None:
    dist.init_process_group("xla")
    config = neuronx_distributed_config(
        tensor_parallel_size=int(os.environ.get("TP", "1")),
        optimizer_config={"zero_one_enabled": False, "grad_clipping": True, "max_grad_norm": 1.0},
    )
    torch.manual_seed(0)
    model = initialize_parallel_model(config, GPT)
    optimizer = initialize_parallel_optimizer(
        config, torch.optim.AdamW, model.parameters(), lr=1e-2
    )
    device = xm.xla_device()
    dp_rank = parallel_state.get_data_parallel_rank()
    dp_size = parallel_state.get_data_parallel_size()
    tokens = torch.randint(
        0, VOCAB, (BATCH, SEQ + 1), generator=torch.Generator().manual_seed(1234)
    )
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
    parallel_state.destroy_model_parallel()

    xm.rendezvous("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
