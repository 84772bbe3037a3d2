"""A small language model trained with a vocabulary-parallel loss, resumed from a state-dict
checkpoint (legacy NxD style). Never run as-is: tests migrate it and run the result.

A vocabulary-parallel embedding with a padding index, a fused gate/up projection (`ColumnParallelLinear(..., stride=2)`, split locally into its two
halves), a column-parallel head whose local vocabulary shard goes to `parallel_cross_entropy`
(once through a `loss_fct` reference, once called; padded labels -100 count, as in NxD),
pipeline / context parallel queries, rmsg, get_logger, init_on_device,
`parallel_layers.checkpointing.save` / `load` of a dict with the model, the optimizer and the
step, and the trainer's `save_checkpoint` with `num_kept_ckpts`, `async_save`, `has_checkpoint`
and `finalize_checkpoint`. The argument is a checkpoint folder.
"""

import os
import sys
from functools import partial

import neuronx_distributed as nxd
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm
from neuronx_distributed.parallel_layers import checkpointing, parallel_state
from neuronx_distributed.parallel_layers.layers import (
    ColumnParallelLinear,
    ParallelEmbedding,
    RowParallelLinear,
)
from neuronx_distributed.parallel_layers.loss_functions import parallel_cross_entropy
from neuronx_distributed.parallel_layers.mappings import gather_from_tensor_model_parallel_region
from neuronx_distributed.parallel_layers.random import model_parallel_xla_manual_seed
from neuronx_distributed.utils.logger import get_logger
from neuronx_distributed.utils.model_utils import init_on_device

logger = get_logger()
VOCAB, HIDDEN, FFN, SEQ, GLOBAL_BATCH, STEPS, SAVE_AFTER = 48, 16, 32, 8, 8, 8, 4


def _init_normal(std: float, weight: torch.Tensor) -> None:
    nn.init.normal_(weight, mean=0.0, std=std)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        init_method = partial(_init_normal, 0.2)
        self.gate_up_proj = ColumnParallelLinear(
            HIDDEN, 2 * FFN, stride=2, bias=False, gather_output=False, init_method=init_method
        )
        self.down_proj = RowParallelLinear(
            FFN, HIDDEN, bias=False, input_is_parallel=True, init_method=init_method
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class LM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pad_token_id = 3
        self.embed = ParallelEmbedding(
            VOCAB, HIDDEN, self.pad_token_id, init_method=partial(_init_normal, 0.5)
        )
        self.mlp = MLP()
        self.norm = nn.LayerNorm(HIDDEN)
        self.head = ColumnParallelLinear(
            HIDDEN, VOCAB, bias=False, gather_output=False, init_method=partial(_init_normal, 0.2)
        )

    def forward(self, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids)
        h = h + self.mlp(h)
        logits = self.head(self.norm(h))  # [batch, seq, vocab / tp]
        if parallel_state.get_context_model_parallel_size() > 1:
            raise RuntimeError("context parallelism is not used here")
        loss_fct = parallel_cross_entropy
        per_token = loss_fct(logits.view(-1, logits.size(-1)), labels.view(-1))
        return torch.mean(per_token)


def build() -> tuple[nn.Module, torch.optim.Optimizer]:
    seed = 1234 + 100 * parallel_state.get_pipeline_model_parallel_rank()
    model_parallel_xla_manual_seed(seed)
    model = LM()
    return model, torch.optim.AdamW(model.parameters(), lr=3e-2)


def train_step(model, optimizer, ids, labels) -> torch.Tensor:
    loss = model(ids, labels)
    loss.backward()
    xm.reduce_gradients(optimizer, groups=parallel_state.get_data_parallel_replica_groups())
    optimizer.step()
    optimizer.zero_grad()
    xm.mark_step()
    total = xm.all_reduce(
        xm.REDUCE_SUM, loss.detach(), groups=parallel_state.get_data_parallel_replica_groups()
    )
    return total / parallel_state.get_data_parallel_size()


def main() -> None:
    folder = sys.argv[1]
    dist.init_process_group("xla")
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=int(os.environ.get("TP", "1"))
    )
    assert parallel_state.get_context_model_parallel_rank() == 0
    where = parallel_state.rmsg("started")
    assert where.startswith(f"[rank_{dist.get_rank()}_pp0_tp"), where
    logger.info(where)
    with init_on_device(torch.device("meta")):  # parameters on "meta", buffers not
        probe = nn.BatchNorm1d(4)
    assert probe.weight.is_meta and not probe.running_mean.is_meta
    model, optimizer = build()

    gen = torch.Generator().manual_seed(7)
    ids = torch.randint(0, VOCAB, (STEPS, GLOBAL_BATCH, SEQ + 1), generator=gen)
    labels = ids[..., 1:].clone()
    labels[..., -2:] = -100  # padding: NxD's loss does not ignore it
    ids = ids[..., :-1]
    dp, dp_rank = parallel_state.get_data_parallel_size(), parallel_state.get_data_parallel_rank()
    local = GLOBAL_BATCH // dp
    batches = [
        (
            ids[s, dp_rank * local : (dp_rank + 1) * local],
            labels[s, dp_rank * local : (dp_rank + 1) * local],
        )
        for s in range(STEPS)
    ]

    state_dir = os.path.join(folder, "state")
    for step, (x, y) in enumerate(batches):
        loss = train_step(model, optimizer, x, y)
        if dist.get_rank() == 0:
            print(f"LOSS {step} {loss.item():.8f}")
        if step + 1 == SAVE_AFTER:
            state_dict = {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "global_step": step,
            }
            checkpointing.save(state_dict, state_dir)
        if step + 1 >= SAVE_AFTER:
            nxd.save_checkpoint(
                os.path.join(folder, "trainer"),
                f"step_{step}",
                model=model,
                optimizer=optimizer,
                user_content={"step": step},
                num_kept_ckpts=2,
                async_save=True,
            )
    nxd.finalize_checkpoint()
    assert nxd.has_checkpoint(os.path.join(folder, "trainer"))
    if dist.get_rank() == 0:
        print("KEPT", sorted(os.listdir(os.path.join(folder, "trainer"))))

    # the round trip: a fresh model and optimizer resume from the state dict and replay the rest
    model, optimizer = build()
    state_dict = checkpointing.load(state_dir, model)
    optimizer.load_state_dict(state_dict["optimizer"])
    for step in range(state_dict["global_step"] + 1, STEPS):
        loss = train_step(model, optimizer, *batches[step])
        if dist.get_rank() == 0:
            print(f"RESUMED {step} {loss.item():.8f}")
    # called directly on the local vocabulary shard, against NxD's formula on the gathered logits
    with torch.no_grad():
        shard = model.head(model.embed(ids[0]))
        direct = parallel_cross_entropy(shard, labels[0])
        full = gather_from_tensor_model_parallel_region(shard)
        picked = full.gather(-1, labels[0].clamp(min=0).unsqueeze(-1)).squeeze(-1)
        expected = torch.logsumexp(full, dim=-1) - torch.where(labels[0] >= 0, picked, 0.0)
    assert direct.shape == labels[0].shape
    torch.testing.assert_close(direct, expected)
    if dist.get_rank() == 0:
        print(f"DIRECT 0 {direct.mean().item():.8f}")
    xm.rendezvous("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
