"""The native PyTorch target of legacy/gpt_tp.py, written by hand: DeviceMesh, DTensor TP, FSDP2.

TP comes from the environment; the data-parallel size is the world size divided by TP.
"""

import os

import parallel_mesh
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import Replicate
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

VOCAB, HIDDEN, HEADS, LAYERS, SEQ, BATCH, STEPS = 64, 32, 4, 2, 16, 8, 6


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        tp_size = parallel_mesh.tp_mesh().size()
        # each rank owns HEADS / TP heads
        self.local_heads = parallel_mesh.divide(HEADS, tp_size)
        self.head_dim = HIDDEN // HEADS
        self.query = parallelize_module(
            torch.nn.Linear(HIDDEN, HIDDEN), parallel_mesh.tp_mesh(), ColwiseParallel()
        )
        self.key = parallelize_module(
            torch.nn.Linear(HIDDEN, HIDDEN), parallel_mesh.tp_mesh(), ColwiseParallel()
        )
        self.value = parallelize_module(
            torch.nn.Linear(HIDDEN, HIDDEN), parallel_mesh.tp_mesh(), ColwiseParallel()
        )
        self.dense = parallelize_module(
            torch.nn.Linear(HIDDEN, HIDDEN), parallel_mesh.tp_mesh(), RowwiseParallel()
        )

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
        self.up = parallelize_module(
            torch.nn.Linear(HIDDEN, 4 * HIDDEN, bias=True),
            parallel_mesh.tp_mesh(),
            ColwiseParallel(),
        )
        self.down = parallelize_module(
            torch.nn.Linear(4 * HIDDEN, HIDDEN, bias=True),
            parallel_mesh.tp_mesh(),
            RowwiseParallel(),
        )

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
        self.embed = parallelize_module(
            torch.nn.Embedding(VOCAB, HIDDEN),
            parallel_mesh.tp_mesh(),
            RowwiseParallel(input_layouts=Replicate()),
        )
        self.pos = nn.Embedding(SEQ, HIDDEN)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(HIDDEN)
        self.lm_head = parallelize_module(
            torch.nn.Linear(HIDDEN, VOCAB, bias=False),
            parallel_mesh.tp_mesh(),
            ColwiseParallel(output_layouts=Replicate()),
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.pos(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def main() -> None:
    dist.init_process_group("gloo")
    config = parallel_mesh.training_config(
        "cpu",
        tensor_parallel_size=int(os.environ.get("TP", "1")),
        optimizer_config={"zero_one_enabled": False, "grad_clipping": True, "max_grad_norm": 1.0},
    )
    torch.manual_seed(0)
    model = fully_shard(GPT(), mesh=parallel_mesh.dp_mesh())
    optimizer = parallel_mesh.clip_grad_norm_before_step(
        torch.optim.AdamW(model.parameters(), lr=1e-2), config
    )
    device = torch.device("cpu")
    dp_rank = parallel_mesh.dp_mesh().get_local_rank()
    dp_size = parallel_mesh.dp_mesh().size()
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
        reported = loss.detach().clone()
        dist.all_reduce(reported, group=parallel_mesh.dp_mesh().get_group())
        if dist.get_rank() == 0:
            print(f"LOSS {step} {reported.item() / dp_size:.8f}")
    parallel_mesh.destroy()

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
