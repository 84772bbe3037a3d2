"""A grouped-query attention block on GQAQKVColumnParallelLinear (legacy NxD style). Never run as-is."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm
from neuronx_distributed.modules.qkv_linear import GQAQKVColumnParallelLinear
from neuronx_distributed.parallel_layers import parallel_state
from neuronx_distributed.parallel_layers.layers import RowParallelLinear
from neuronx_distributed.trainer import (
    initialize_parallel_model,
    initialize_parallel_optimizer,
    neuronx_distributed_config,
)

VOCAB, HIDDEN, HEADS, KV_HEADS, SEQ, BATCH, STEPS = 48, 32, 4, 2, 10, 8, 5
HEAD_DIM = HIDDEN // HEADS


class GQAAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        tp_size = parallel_state.get_tensor_model_parallel_size()
        self.local_heads = HEADS // tp_size
        self.local_kv_heads = KV_HEADS // tp_size
        self.qkv = GQAQKVColumnParallelLinear(
            HIDDEN,
            [HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM],
            bias=False,
            gather_output=False,
        )
        self.o_proj = RowParallelLinear(
            HEADS * HEAD_DIM, HIDDEN, bias=False, input_is_parallel=True
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.qkv(x)
        q = q.view(b, s, self.local_heads, HEAD_DIM).transpose(1, 2)
        k = k.view(b, s, self.local_kv_heads, HEAD_DIM).transpose(1, 2)
        v = v.view(b, s, self.local_kv_heads, HEAD_DIM).transpose(1, 2)
        groups = self.local_heads // self.local_kv_heads
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, self.local_heads * HEAD_DIM))


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.attn = GQAAttention()
        self.norm = nn.LayerNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        x = x + self.attn(x)
        return self.head(self.norm(x))


def main() -> None:
    dist.init_process_group("xla")
    config = neuronx_distributed_config(tensor_parallel_size=int(os.environ.get("TP", "1")))
    torch.manual_seed(0)
    model = initialize_parallel_model(config, Model)
    optimizer = initialize_parallel_optimizer(
        config, torch.optim.AdamW, model.parameters(), lr=1e-2
    )
    device = xm.xla_device()
    dp_rank = parallel_state.get_data_parallel_rank()
    dp_size = parallel_state.get_data_parallel_size()
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=torch.Generator().manual_seed(3))
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
