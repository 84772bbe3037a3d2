"""The device mesh of this project's model parallelism, and what NeuronX Distributed did around
it, in plain PyTorch.

Written by neuron-migrate when it moved NeuronX Distributed (NxD) code to native PyTorch (rules
NM314-NM319; `neuron-migrate explain NM315`). NxD kept its process groups in ``parallel_state``;
here they live in one DeviceMesh with the dimensions ("dp", "tp"), tensor parallel innermost
(consecutive ranks), as NxD ordered them. Model code in any module reads it with ``tp_mesh()`` /
``dp_mesh()``. Below the mesh: NxD's trainer defaults (``training_config``, gradient clipping
before each step, across meshes), gradient and tensor all-reduces over one dimension, DCP
checkpoints with NxD's signatures, NxD's ``mappings`` under their own names (the same collectives
forward and backward), ``QKVLinear`` for GQAQKVColumnParallelLinear, ``StridedLinear`` for a fused
(strided) ColumnParallelLinear, NxD's ``parallel_cross_entropy`` and its state-dict ``save`` /
``load``. Edit this file freely: the migration writes it only when it does not exist yet.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.distributed.tensor
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.tensor import Shard
from torch.distributed.tensor.placement_types import _StridedShard

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


def dim_size(name: str) -> int:
    """The size of one mesh dimension; 1 for a dimension the mesh does not have (NxD's pipeline,
    context and expert parallel sizes when they were not set)."""
    mesh = get_mesh()
    return mesh[name].size() if name in (mesh.mesh_dim_names or ()) else 1


def dim_rank(name: str) -> int:
    """This rank's index along one mesh dimension; 0 for a dimension the mesh does not have."""
    mesh = get_mesh()
    return mesh[name].get_local_rank() if name in (mesh.mesh_dim_names or ()) else 0


def rmsg(msg: str) -> str:
    """`msg` prefixed with this rank's place, as NxD's parallel_state.rmsg wrote it."""
    if is_initialized():
        tp, dp = tp_mesh().get_local_rank(), dp_mesh().get_local_rank()
        pp, cp = dim_rank("pp"), dim_rank("cp")
    else:
        pp = tp = dp = cp = -1
    rank = dist.get_rank() if dist.is_initialized() else int(os.environ.get("RANK", 0))
    return f"[rank_{rank}_pp{pp}_tp{tp}_dp{dp}_cp{cp}] {msg}"


def get_logger(name: str = "neuronx_distributed", rank0_only: bool = True) -> logging.Logger:
    """A logger writing to stdout, at the level of NXD_LOG_LEVEL (default info); with
    `rank0_only` only global rank 0 writes, as with NxD's get_logger."""
    logger = logging.getLogger(name + ("[0]" if rank0_only else "[]"))
    if logger.handlers:
        return logger
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(
        logging.Formatter("[%(asctime)s %(levelname).1s %(filename)s:%(lineno)d] %(message)s")
    )
    logger.addHandler(handler)
    level = os.environ.get("NXD_LOG_LEVEL", "info").upper()
    level = {"TRACE": "DEBUG", "OFF": "CRITICAL", "FATAL": "CRITICAL"}.get(level, level)
    logger.setLevel(getattr(logging, level, logging.INFO))
    logger.propagate = False
    if rank0_only:
        logger.addFilter(lambda record: int(os.environ.get("RANK", 0)) == 0)
    return logger


@contextlib.contextmanager
def init_on_device(
    device: torch.device | str, include_buffers: bool = False, **_: Any
) -> Iterator[None]:
    """Build modules with their parameters on `device` (buffers too with `include_buffers`),
    e.g. ``torch.device("meta")`` to build a model without allocating it (NxD's init_on_device)."""
    device = torch.device(device)
    if include_buffers:
        with device:
            yield
        return
    register = torch.nn.Module.register_parameter

    def register_on_device(module: torch.nn.Module, name: str, param: Any) -> None:
        register(module, name, param)
        if param is not None and param.device != device:
            moved = param.detach().to(device)
            module._parameters[name] = torch.nn.Parameter(moved, param.requires_grad)

    torch.nn.Module.register_parameter = register_on_device
    try:
        yield
    finally:
        torch.nn.Module.register_parameter = register


def is_initialized() -> bool:
    return _MESH is not None


def destroy() -> None:
    """Forget the mesh (destroy_model_parallel); the default process group stays."""
    global _MESH
    _MESH = None


def with_init(module: torch.nn.Module, init_method: Any) -> torch.nn.Module:
    """Apply an NxD ``init_method`` to the full weight before it is sharded, as NxD did on CPU."""
    with torch.no_grad():
        if isinstance(module, StridedLinear):
            module.init_full_weight(init_method)
        else:
            init_method(module.weight)
    return module


class StridedLinear(torch.nn.Module):
    """ColumnParallelLinear(..., stride=s): ``s`` linears of output_size // s, each sharded by
    ColwiseParallel (plan ``{"parts.*": ColwiseParallel()}``); forward concatenates their outputs.

    NxD split a strided layer's full weight into ``s`` blocks (gate and up, or q, k and v) and gave
    each rank its slice of every block, so the local output is [gate_r, up_r]; sharding each block
    as its own linear gives every rank the same slices in the same order. The parameters are
    ``parts.<i>.weight`` (NxD: one ``weight``).
    """

    def __init__(
        self,
        input_size: int,
        output_size: int,
        stride: int,
        bias: bool = True,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        block = divide(output_size, stride)
        self.parts = torch.nn.ModuleList(
            torch.nn.Linear(input_size, block, bias=bias, dtype=dtype) for _ in range(stride)
        )

    def init_full_weight(self, init_method: Any) -> None:
        """Initialise the full weight at once (the same numbers as NxD's), then split it."""
        full = torch.cat([part.weight for part in self.parts])
        init_method(full)
        for part, block in zip(self.parts, full.chunk(len(self.parts))):
            part.weight.copy_(block)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([part(x) for part in self.parts], dim=-1)


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


class QKVLinear(torch.nn.Module):
    """GQAQKVColumnParallelLinear's projections as three plain linears; forward returns (q, k, v).

    Shard it with a plan on "q", "k" and "v" (ColwiseParallel each). The parameters are q.weight,
    k.weight, v.weight (NxD: weight_q, weight_k, weight_v or a fused weight_qkv).
    """

    def __init__(
        self,
        input_size: int,
        output_sizes: list[int],
        bias: bool = True,
        dtype: torch.dtype | None = None,
        device: torch.device | None = None,
    ) -> None:
        super().__init__()
        q_size, kv_size = output_sizes
        self.q = torch.nn.Linear(input_size, q_size, bias=bias, dtype=dtype, device=device)
        self.k = torch.nn.Linear(input_size, kv_size, bias=bias, dtype=dtype, device=device)
        self.v = torch.nn.Linear(input_size, kv_size, bias=bias, dtype=dtype, device=device)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.q(x), self.k(x), self.v(x)


def all_reduce(tensor: torch.Tensor, dim: str, op: str = "sum") -> torch.Tensor:
    """A reduced copy of `tensor` over one mesh dimension ("dp" or "tp"), as
    xm.all_reduce(xm.REDUCE_<op>, tensor, groups=<NxD's groups>) returned."""
    out = tensor.clone()
    dist.all_reduce(out, op=getattr(dist.ReduceOp, op.upper()), group=get_mesh().get_group(dim))
    return out


def reduce_gradients(optimizer: torch.optim.Optimizer) -> None:
    """Average every gradient over the "dp" dimension (xm.reduce_gradients on NxD's DP groups)."""
    group = get_mesh().get_group("dp")
    size = dist.get_world_size(group)
    if size == 1:
        return
    for param_group in optimizer.param_groups:
        for param in param_group["params"]:
            if param.grad is not None:
                grad = param.grad
                local = grad.to_local() if hasattr(grad, "to_local") else grad
                dist.all_reduce(local, group=group)
                local.div_(size)


def save_checkpoint(
    checkpoint_dir_str: str,
    tag: str,
    model: torch.nn.Module | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: Any = None,
    user_content: Any = None,
    num_kept_ckpts: int | None = None,
) -> None:
    """NxD's save_checkpoint with torch.distributed.checkpoint (DCP): <dir>/<tag>/, every rank.

    Model and optimizer go to DCP (sharded, resharded on load); the scheduler and the user content
    are written by rank 0 beside them, as NxD did. A "newest" file names the last tag; with
    ``num_kept_ckpts`` only that many of the newest checkpoints stay on disk, as in NxD. The save
    is synchronous (NxD's ``async_save`` only overlapped it with training).
    """
    path = os.path.join(checkpoint_dir_str, tag)
    dcp.save(_state(model, optimizer), checkpoint_id=path)
    if dist.get_rank() == 0:
        extras = {"scheduler": scheduler.state_dict() if scheduler is not None else None}
        torch.save({**extras, "user_content": user_content}, os.path.join(path, "extras.pt"))
        with open(os.path.join(checkpoint_dir_str, "newest"), "w") as newest:
            newest.write(tag)
        _keep_newest(checkpoint_dir_str, tag, num_kept_ckpts)
    dist.barrier()


def _keep_newest(checkpoint_dir_str: str, tag: str, num_kept: int | None) -> None:
    """Record `tag` as the newest completed checkpoint; remove the oldest beyond `num_kept`."""
    record = os.path.join(checkpoint_dir_str, "tags")
    tags = []
    if os.path.exists(record):
        with open(record) as lines:
            tags = [line.strip() for line in lines if line.strip() and line.strip() != tag]
    tags.append(tag)
    if num_kept is not None and num_kept != -1:
        for old in tags[: max(len(tags) - num_kept, 0)]:
            shutil.rmtree(os.path.join(checkpoint_dir_str, old), ignore_errors=True)
        tags = tags[max(len(tags) - num_kept, 0) :]
    with open(record, "w") as lines:
        lines.write("".join(f"{t}\n" for t in tags))


def has_checkpoint(checkpoint_dir_str: str) -> bool:
    """Whether save_checkpoint completed a checkpoint in this folder (NxD's has_checkpoint)."""
    return os.path.exists(os.path.join(checkpoint_dir_str, "newest"))


def finalize_checkpoint() -> None:
    """NxD waited here for asynchronous saves; save_checkpoint above is synchronous."""


def load_checkpoint(
    path: str,
    tag: str | None = None,
    model: torch.nn.Module | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: Any = None,
    strict: bool = True,
) -> Any:
    """NxD's load_checkpoint: load in place, return the user content (the newest tag by default)."""
    if tag is None:
        with open(os.path.join(path, "newest")) as newest:
            tag = newest.read().strip()
    folder = os.path.join(path, tag)
    state = _state(model, optimizer)
    dcp.load(state, checkpoint_id=folder)
    if model is not None:
        set_model_state_dict(model, state["model"], options=StateDictOptions(strict=strict))
        if optimizer is not None:
            set_optimizer_state_dict(model, optimizer, state["optimizer"])
    elif optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    extras = torch.load(os.path.join(folder, "extras.pt"), weights_only=False)
    if scheduler is not None and extras["scheduler"] is not None:
        scheduler.load_state_dict(extras["scheduler"])
    return extras["user_content"]


def _state(
    model: torch.nn.Module | None, optimizer: torch.optim.Optimizer | None
) -> dict[str, Any]:
    state: dict[str, Any] = {}
    if model is not None:
        state["model"] = get_model_state_dict(model)
        if optimizer is not None:
            state["optimizer"] = get_optimizer_state_dict(model, optimizer)
    elif optimizer is not None:
        state["optimizer"] = optimizer.state_dict()
    return state


# NxD's parallel_layers.checkpointing.save / load: a dict (the model's state dict under "model",
# the optimizer's, counters) written by every rank with DCP, resharded on load


def save(
    checkpoint: dict[str, Any], output_dir: str, down_cast_bf16: bool = False, **_: Any
) -> None:
    """Save a dict of state (tensors, DTensors, plain values) to `output_dir` with DCP.

    Every rank calls it, as in NxD. Float32 tensors are saved as bfloat16 with ``down_cast_bf16``.
    Beside the DCP files, rank 0 writes the dict's layout (shapes, dtypes, meshes and placements
    of the tensors, the plain values), which ``load`` needs to read it back.
    """
    if down_cast_bf16:
        checkpoint = _map_tensors(
            checkpoint, lambda t: t.to(torch.bfloat16) if t.dtype == torch.float32 else t
        )
    dcp.save(checkpoint, checkpoint_id=output_dir)
    if dist.get_rank() == 0:
        torch.save(_map_tensors(checkpoint, _Slot.of), os.path.join(output_dir, "layout.pt"))
    dist.barrier()


def load(
    chkpt_path: str,
    model: torch.nn.Module | None = None,
    model_or_optimizer: Any = None,
    model_key: str | None = "model",
    strict: bool = True,
    **_: Any,
) -> dict[str, Any] | None:
    """Read what ``save`` wrote; load `model` (or an optimizer) in place from its entry, as NxD
    did, and return the rest of the dict. Tensors come back in the layout of this run's mesh."""
    target = model if model is not None else model_or_optimizer
    layout = torch.load(os.path.join(chkpt_path, "layout.pt"), weights_only=False)
    state = _map_tensors(layout, lambda slot: slot.empty())
    dcp.load(state, checkpoint_id=chkpt_path)
    if target is not None:
        entry = state if model_key is None else state.pop(model_key)
        if isinstance(target, torch.optim.Optimizer):
            target.load_state_dict(entry)
        else:
            target.load_state_dict(entry, strict=strict)
        if model_key is None:
            return None
    return state


class _Slot:
    """Where one tensor of a checkpoint goes: its shape, dtype and, for a DTensor, its mesh
    dimensions and placements."""

    def __init__(self, shape: Any, dtype: torch.dtype, dims: Any = None, placements: Any = None):
        self.shape, self.dtype, self.dims, self.placements = tuple(shape), dtype, dims, placements

    @classmethod
    def of(cls, tensor: torch.Tensor) -> _Slot:
        mesh = getattr(tensor, "device_mesh", None)
        if mesh is None:
            return cls(tensor.shape, tensor.dtype)
        return cls(tensor.shape, tensor.dtype, mesh.mesh_dim_names, tuple(tensor.placements))

    def empty(self) -> torch.Tensor:
        if self.dims is None:
            return torch.empty(self.shape, dtype=self.dtype)
        mesh = get_mesh()
        if tuple(self.dims) != tuple(mesh.mesh_dim_names or ()):
            mesh = mesh[self.dims[0] if len(self.dims) == 1 else tuple(self.dims)]
        return torch.distributed.tensor.empty(
            self.shape, dtype=self.dtype, device_mesh=mesh, placements=self._placements()
        )

    def _placements(self) -> tuple[Any, ...]:
        """The placements this run's mesh gives the tensor. FSDP2 over a column-parallel layer
        shards "dp" and "tp" on the same dimension, and its "dp" placement (_StridedShard) splits
        by the "tp" size: re-derive it for this run's "tp" size."""
        placements = list(self.placements)
        if tuple(self.dims) == ("dp", "tp") and len(placements) == 2:
            outer, inner = placements
            dim = getattr(inner, "dim", None)
            if isinstance(inner, Shard) and getattr(outer, "dim", None) == dim:
                tp = dim_size("tp")
                placements[0] = _StridedShard(dim, split_factor=tp) if tp > 1 else Shard(dim)
        return tuple(placements)


def _map_tensors(value: Any, function: Any) -> Any:
    if isinstance(value, (torch.Tensor, _Slot)):
        return function(value)
    if isinstance(value, dict):
        return {key: _map_tensors(item, function) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(item, function) for item in value)
    return value


def parallel_cross_entropy(
    vocab_parallel_logits: torch.Tensor, target: torch.Tensor, label_smoothing: float = 0.0
) -> torch.Tensor:
    """NxD's parallel_cross_entropy: the per-token loss (no reduction) of logits whose last
    dimension is this rank's vocabulary shard (a column-parallel head's local output).

    The shards are gathered over "tp" (the backward keeps this rank's slice of the gradient) and
    F.cross_entropy computes the loss. As in NxD, nothing is ignored: a target outside the
    vocabulary (-100) gives log(sum(exp(logits))).
    """
    if label_smoothing:
        raise NotImplementedError(
            "NxD's parallel_cross_entropy smoothed labels over each rank's vocabulary shard; "
            "write the smoothing you want with F.cross_entropy(..., label_smoothing=...)"
        )
    if hasattr(vocab_parallel_logits, "full_tensor"):
        logits = vocab_parallel_logits.full_tensor()
    else:
        logits = gather_from_tensor_model_parallel_region(vocab_parallel_logits)
    flat = logits.reshape(-1, logits.size(-1))
    labels = target.reshape(-1)
    inside = (labels >= 0) & (labels < flat.size(-1))
    loss = torch.nn.functional.cross_entropy(flat, labels * inside, reduction="none")
    loss = torch.where(inside, loss, torch.logsumexp(flat, dim=-1))
    return loss.view(target.shape)
