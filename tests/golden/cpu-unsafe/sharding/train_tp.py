"""Tensor-parallel MLP block with NeuronX Distributed, plus XLA FSDP and SPMD variants.

Nothing here has an automatic fix: neuron-migrate reports each line with the native
replacement (DTensor / DeviceMesh / FSDP2).
"""

import parallel_mesh
import torch
from torch.distributed.tensor.parallel import parallelize_module, ColwiseParallel, RowwiseParallel
import torch.nn as nn

import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP


class ParallelMLP(nn.Module):
    def __init__(self, hidden: int, ffn: int):
        super().__init__()
        self.up = parallelize_module(torch.nn.Linear(hidden, ffn), parallel_mesh.tp_mesh(), ColwiseParallel())
        self.down = parallelize_module(torch.nn.Linear(ffn, hidden), parallel_mesh.tp_mesh(), RowwiseParallel())

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def build(tp_size: int, use_fsdp: bool, use_spmd: bool):
    parallel_mesh.init_mesh("cpu", tensor_parallel_size=tp_size)
    tp_rank = parallel_mesh.tp_mesh().get_local_rank()
    model = ParallelMLP(1024, 4096)
    if use_fsdp:
        model = FSDP(model, compute_dtype=torch.bfloat16)
    if use_spmd:
        xr.use_spmd()
        mesh = xs.Mesh(list(range(xr.global_runtime_device_count())), (4, 2), ("dp", "tp"))
        xs.mark_sharding(model.up.weight, mesh, ("tp", None))
    return model.to(torch.device("cpu")), tp_rank
