"""The device mesh of this project's model parallelism (plain PyTorch).

Written by neuron-migrate when it moved NeuronX Distributed code to native PyTorch. NeuronX
Distributed kept its process groups in ``parallel_state``; here they live in one DeviceMesh with the
dimensions ("dp", "tp"), tensor parallel innermost (consecutive ranks), as NxD ordered them. Model
code anywhere in the project reads the mesh with ``tp_mesh()`` / ``dp_mesh()``. The collectives at
the end keep the forward and backward of NxD's ``mappings`` functions. Edit this file freely: the
migration writes it only when it does not exist yet.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh

_MESH: DeviceMesh | None = None


def init_mesh(device_type: str, tensor_parallel_size: int = 1) -> DeviceMesh:
    """Create the ("dp", "tp") mesh over every rank (initialize_model_parallel)."""
    global _MESH
    if not dist.is_initialized():
        dist.init_process_group()
    world = dist.get_world_size()
    if world % tensor_parallel_size:
        raise ValueError(
            f"world size {world} is not divisible by tensor parallel size {tensor_parallel_size}"
        )
    _MESH = init_device_mesh(
        device_type,
        (world // tensor_parallel_size, tensor_parallel_size),
        mesh_dim_names=("dp", "tp"),
    )
    return _MESH


def get_mesh() -> DeviceMesh:
    if _MESH is None:
        raise RuntimeError(
            "the device mesh is not initialized: call parallel_mesh.init_mesh(...) first"
        )
    return _MESH


def tp_mesh() -> DeviceMesh:
    return get_mesh()["tp"]


def dp_mesh() -> DeviceMesh:
    return get_mesh()["dp"]


def is_initialized() -> bool:
    return _MESH is not None


def destroy() -> None:
    """Forget the mesh (destroy_model_parallel); the default process group stays."""
    global _MESH
    _MESH = None


def divide(numerator: int, denominator: int) -> int:
    """Integer division that insists on divisibility, as NxD's utils.divide did."""
    if numerator % denominator:
        raise ValueError(f"{numerator} is not divisible by {denominator}")
    return numerator // denominator


def training_config(device_type: str, **config: Any) -> dict[str, Any]:
    """NxD's neuronx_distributed_config: its settings with NxD's defaults, and the mesh.

    NxD's optimizer clipped gradients to norm 1.0 unless told otherwise; the same defaults are kept.
    """
    optimizer_config = {"zero_one_enabled": False, "grad_clipping": True, "max_grad_norm": 1.0}
    optimizer_config.update(config.pop("optimizer_config", None) or {})
    settings = {"tensor_parallel_size": 1, "sequence_parallel": False, **config}
    settings["optimizer_config"] = optimizer_config
    if not is_initialized():
        init_mesh(device_type, settings["tensor_parallel_size"])
    return settings


def clip_grad_norm_before_step(
    optimizer: torch.optim.Optimizer, config: dict[str, Any]
) -> torch.optim.Optimizer:
    """Clip gradients before every ``optimizer.step()`` as NxD's optimizer did (DTensor-aware)."""
    optimizer_config = config["optimizer_config"]
    if optimizer_config["grad_clipping"]:
        max_norm = optimizer_config["max_grad_norm"]

        def clip(opt: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
            params = [
                p for group in opt.param_groups for p in group["params"] if p.grad is not None
            ]
            clip_grad_norm(params, max_norm)

        optimizer.register_step_pre_hook(clip)
    return optimizer


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    """torch.nn.utils.clip_grad_norm_ over parameters that live on different meshes.

    Tensor-parallel parameters are DTensors on the ("dp", "tp") mesh, the others (after FSDP2) on
    "dp" alone; the norm is taken per mesh and combined, as NxD's grads.clip_grad_norm did.
    """
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    by_mesh: dict[Any, list[torch.Tensor]] = {}
    for p in params:
        if p.grad is not None:
            by_mesh.setdefault(getattr(p.grad, "device_mesh", None), []).append(p.grad)
    norms = []
    for grads in by_mesh.values():
        norm = torch.nn.utils.get_total_norm(grads, norm_type)
        norms.append(norm.full_tensor() if hasattr(norm, "full_tensor") else norm)
    if not norms:
        return torch.tensor(0.0)
    total = torch.linalg.vector_norm(torch.stack(norms), norm_type)
    coefficient = float(torch.clamp(max_norm / (total + 1e-6), max=1.0))
    for grads in by_mesh.values():
        for grad in grads:
            grad.mul_(coefficient)
    return total


# NxD's mappings, under their NxD names and parameters: the same collectives in forward and
# backward, on the "tp" dimension of the mesh unless a process group is given.


def _all_reduce(x: torch.Tensor, group: dist.ProcessGroup) -> torch.Tensor:
    x = x.clone()
    dist.all_reduce(x, group=group)
    return x


def _all_gather(x: torch.Tensor, dim: int, group: dist.ProcessGroup) -> torch.Tensor:
    parts = [torch.empty_like(x) for _ in range(dist.get_world_size(group))]
    dist.all_gather(parts, x.contiguous(), group=group)
    return torch.cat(parts, dim=dim)


def _split(x: torch.Tensor, dim: int, group: dist.ProcessGroup) -> torch.Tensor:
    return x.chunk(dist.get_world_size(group), dim=dim)[dist.get_rank(group)].contiguous()


_OPS = {
    "identity": lambda x, dim, group: x,
    "all_reduce": lambda x, dim, group: _all_reduce(x, group),
    "all_gather": _all_gather,
    "split": _split,
    # gloo has no reduce-scatter: all-reduce, then keep this rank's slice
    "reduce_scatter": lambda x, dim, group: _split(_all_reduce(x, group), dim, group),
}


class _Collective(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any, x: torch.Tensor, ops: tuple[str, str], dim: int, group: Any
    ) -> torch.Tensor:
        ctx.backward_op, ctx.dim, ctx.group = ops[1], dim, group
        return x if dist.get_world_size(group) == 1 else _OPS[ops[0]](x, dim, group)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        if dist.get_world_size(ctx.group) > 1:
            grad = _OPS[ctx.backward_op](grad, ctx.dim, ctx.group)
        return grad, None, None, None


def _collective(x: torch.Tensor, forward: str, backward: str, dim: int, group: Any) -> torch.Tensor:
    return _Collective.apply(
        x, (forward, backward), dim, group if group is not None else get_mesh().get_group("tp")
    )


def copy_to_tensor_model_parallel_region(
    input_: torch.Tensor, process_group: Any = None
) -> torch.Tensor:
    """Identity forward, all-reduce backward."""
    return _collective(input_, "identity", "all_reduce", -1, process_group)


def reduce_from_tensor_model_parallel_region(
    input_: torch.Tensor, process_group: Any = None
) -> torch.Tensor:
    """All-reduce forward, identity backward."""
    return _collective(input_, "all_reduce", "identity", -1, process_group)


def scatter_to_tensor_model_parallel_region(
    input_: torch.Tensor, process_group: Any = None
) -> torch.Tensor:
    """This rank's slice of the last dimension forward, all-gather backward."""
    return _collective(input_, "split", "all_gather", -1, process_group)


def gather_from_tensor_model_parallel_region(
    input_: torch.Tensor, process_group: Any = None
) -> torch.Tensor:
    """All-gather along the last dimension forward, this rank's slice backward."""
    return _collective(input_, "all_gather", "split", -1, process_group)


def scatter_to_sequence_parallel_region(
    input_: torch.Tensor, sequence_dimension: int = 0, process_group: Any = None
) -> torch.Tensor:
    """This rank's slice of the sequence forward, all-gather backward."""
    return _collective(input_, "split", "all_gather", sequence_dimension, process_group)


def gather_from_sequence_parallel_region(
    input_: torch.Tensor,
    sequence_dimension: int = 0,
    to_model_parallel: bool = True,
    process_group: Any = None,
) -> torch.Tensor:
    """All-gather the sequence forward; reduce-scatter (or this rank's slice) backward."""
    backward = "reduce_scatter" if to_model_parallel else "split"
    return _collective(input_, "all_gather", backward, sequence_dimension, process_group)


def reduce_scatter_to_sequence_parallel_region(
    input_: torch.Tensor, sequence_dimension: int = 0, process_group: Any = None
) -> torch.Tensor:
    """Reduce-scatter along the sequence forward, all-gather backward."""
    return _collective(input_, "reduce_scatter", "all_gather", sequence_dimension, process_group)
