"""NM314 nxd-parallel-layers: NxD's tensor-parallel layers become plain torch.nn layers sharded
by a DTensor plan on the mesh's "tp" dimension, at the place they are built.

`parallelize_module(nn.Linear(...), tp_mesh, ColwiseParallel(...))` is applied right where NxD
built its layer, so it works wherever the layer is made (in a module's __init__, or swapped into
a Hugging Face model after it is built). The full weight is initialised first and then split from
rank 0, as NxD's CPU initialisation did, so every TP size starts from the same weights.
"""

from __future__ import annotations

import libcst as cst

from .nxd import support

TP = f"{support.MESH}.tp_mesh()"
PARALLEL = "from torch.distributed.tensor.parallel import {}"
IMPORTS = [
    "import torch",
    support.MESH_IMPORT,
    PARALLEL.format("parallelize_module"),
    PARALLEL.format("ColwiseParallel"),
    PARALLEL.format("RowwiseParallel"),
    PARALLEL.format("SequenceParallel"),
    "from torch.distributed.tensor import Replicate",
    "from torch.distributed.tensor import Shard",
]

LINEAR = ("input_size", "output_size", "bias")
COLUMN = (
    *LINEAR,
    "gather_output",
    "dtype",
    "device",
    "stride",
    "init_method",
    "sequence_parallel_enabled",
    "sequence_dimension",
    "keep_master_weight",
)
ROW = (
    *LINEAR,
    "input_is_parallel",
    "dtype",
    "device",
    "stride",
    "init_method",
    "sequence_parallel_enabled",
    "sequence_dimension",
    "keep_master_weight",
)
EMBEDDING = (
    "num_embeddings",
    "embedding_dim",
    "padding_idx",
    "max_norm",
    "norm_type",
    "scale_grad_by_freq",
    "sparse",
    "init_method",
    "device",
    "dtype",
    "shard_across_embedding",
    "pad",
    "sequence_parallel_enabled",
)
QKV = (
    "input_size",
    "output_sizes",
    "bias",
    "gather_output",
    "dtype",
    "device",
    "init_method",
    "sequence_parallel_enabled",
    "keep_master_weight",
    "kv_size_multiplier",
    "fuse_qkv",
)
LAYER_NORM = (
    "normalized_shape",
    "eps",
    "elementwise_affine",
    "bias",
    "device",
    "dtype",
    "sequence_parallel_enabled",
)
# the arguments each layer cannot do without
REQUIRED = {
    "ColumnParallelLinear": LINEAR[:2],
    "RowParallelLinear": LINEAR[:2],
    "ParallelEmbedding": EMBEDDING[:2],
    "GQAQKVColumnParallelLinear": QKV[:2],
    "LayerNorm": LAYER_NORM[:1],
}
# arguments that change nothing once the layer is a plain one sharded by DTensor
DROPPED = ("keep_master_weight", "fuse_qkv", "sequence_dimension", "init_method")
NEUTRAL = {"device": ("None",), "stride": ("1",), "pad": ("False",), "kv_size_multiplier": ("1",)}


def _neutral(call, skip: str = "") -> str | None:
    for name, values in NEUTRAL.items():
        if name != skip and name in call.args and call.args[name] not in values:
            return f"`{name}={call.args[name]}` has no plain-layer equivalent"
    return None


def _ctor(kind: str, call, names: tuple[str, ...]) -> str:
    """`torch.nn.Linear(a, b, bias=..., dtype=...)` from the NxD arguments that carry over."""
    positional = [call.args[n] for n in names[:2]]
    keywords = [f"{n}={call.args[n]}" for n in names[2:] if n in call.args]
    if "dtype" in call.args:
        keywords.append(f"dtype={call.args['dtype']}")
    return f"{kind}({', '.join(positional + keywords)})"


def _layouts(**layouts: str | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in layouts.items() if v is not None)


def _when(sp, layout: str) -> str | None:
    """The sequence-parallel layout: always (True), never (False), or chosen at run time (a
    DTensor style's layout None is its default, Replicate())."""
    if sp is True:
        return layout
    if sp is False:
        return None
    return f"{layout} if {sp} else None"


class ParallelLayers(support.NxdRule):
    NAMES = support.LAYERS

    def rewrite(self, node: cst.Call, qname: str):
        short = qname.rsplit(".", 1)[1]
        params = {
            "ColumnParallelLinear": COLUMN,
            "RowParallelLinear": ROW,
            "ParallelEmbedding": EMBEDDING,
            "GQAQKVColumnParallelLinear": QKV,
            "LayerNorm": LAYER_NORM,
        }[short]
        call = support.Call(node, self.ctx.code, params)
        if call.problem:
            return call.problem
        missing = [name for name in REQUIRED[short] if name not in call.args]
        if missing:
            return f"`{missing[0]}` is not given as NxD's signature has it"
        unknown = call.unknown(params)
        if unknown:
            return f"`{unknown[0]}=` has no plain-layer equivalent here"
        strided = short == "ColumnParallelLinear" and call.args.get("stride", "1") != "1"
        reason = _neutral(call) if not strided else _neutral(call, skip="stride")
        if reason:
            return reason
        # True, False, or the expression that decides at run time
        sequence_parallel = call.flag("sequence_parallel_enabled", False)
        if sequence_parallel is None:
            sequence_parallel = call.args["sequence_parallel_enabled"]
        seq = call.args.get("sequence_dimension", "0")
        code = getattr(self, short)(call, sequence_parallel, f"Shard({seq})")
        if code is None or code.startswith("!"):
            return code[1:] if code else "the layout is not a literal"
        return self.fix(node, code, IMPORTS)

    @staticmethod
    def _init(layer: str, call) -> str:
        if "init_method" in call.args:
            return f"{support.MESH}.with_init({layer}, {call.args['init_method']})"
        return layer

    def ColumnParallelLinear(self, call, sp: bool, shard: str) -> str | None:
        gather = call.flag("gather_output", True)
        if gather is None:
            return "!`gather_output` is not a literal True/False"
        if gather and sp is not False:
            return "!NxD refuses gather_output=True with sequence parallelism"
        style = _layouts(
            input_layouts=_when(sp, shard), output_layouts="Replicate()" if gather else None
        )
        if call.args.get("stride", "1") != "1":
            # a fused layer (gate and up, or q, k and v): each block sharded on its own
            if gather:
                return "!`stride=` with gather_output=True gathers NxD's interleaved blocks; review by hand"
            args = [call.args["input_size"], call.args["output_size"], call.args["stride"]]
            args += [f"{n}={call.args[n]}" for n in ("bias", "dtype") if n in call.args]
            layer = self._init(f"{support.MESH}.StridedLinear({', '.join(args)})", call)
            return f'parallelize_module({layer}, {TP}, {{"parts.*": ColwiseParallel({style})}})'
        layer = self._init(_ctor("torch.nn.Linear", call, LINEAR), call)
        return f"parallelize_module({layer}, {TP}, ColwiseParallel({style}))"

    def RowParallelLinear(self, call, sp: bool, shard: str) -> str | None:
        parallel_input = call.flag("input_is_parallel", False)
        if parallel_input is None:
            return "!`input_is_parallel` is not a literal True/False"
        if sp is not False and not parallel_input:
            return "!NxD refuses sequence parallelism without input_is_parallel=True"
        layer = self._init(_ctor("torch.nn.Linear", call, LINEAR), call)
        style = _layouts(
            input_layouts=None if parallel_input else "Replicate()",
            output_layouts=_when(sp, shard),
        )
        return f"parallelize_module({layer}, {TP}, RowwiseParallel({style}))"

    def ParallelEmbedding(self, call, sp: bool, shard: str) -> str | None:
        if call.args.get("max_norm", "None") != "None":
            return "!`max_norm=` on a sharded vocabulary needs a review by hand"
        for name in ("scale_grad_by_freq", "sparse"):
            if call.args.get(name, "False") != "False":
                return f"!`{name}=` has no DTensor equivalent"
        across = call.flag("shard_across_embedding", False)
        if across is None:
            return "!`shard_across_embedding` is not a literal True/False"
        layer = _ctor("torch.nn.Embedding", call, ("num_embeddings", "embedding_dim"))
        padding = call.args.get("padding_idx", "None")
        if padding not in ("None", "0"):
            # NxD kept a padding_idx only when it was truthy (0 meant none) and, unlike
            # nn.Embedding, did not zero its row: it initialised every row (normal_ by default)
            value = padding if padding.isdigit() else f"{padding} or None"
            layer = f"{layer[:-1]}, padding_idx={value})"
            if "init_method" not in call.args:
                call.args["init_method"] = "torch.nn.init.normal_"
        layer = self._init(layer, call)
        if across:
            if sp:
                return (
                    "!sequence parallelism with shard_across_embedding=True needs a review by hand"
                )
            return f"parallelize_module({layer}, {TP}, ColwiseParallel(output_layouts=Replicate()))"
        style = _layouts(input_layouts="Replicate()", output_layouts=_when(sp, shard))
        return f"parallelize_module({layer}, {TP}, RowwiseParallel({style}))"

    def GQAQKVColumnParallelLinear(self, call, sp: bool, shard: str) -> str | None:
        gather = call.flag("gather_output", True)
        if gather is None:
            return "!`gather_output` is not a literal True/False"
        layer = self._init(
            _ctor(f"{support.MESH}.QKVLinear", call, ("input_size", "output_sizes", "bias")), call
        )
        style = _layouts(
            input_layouts=_when(sp, shard), output_layouts="Replicate()" if gather else None
        )
        plan = ", ".join(f'"{p}": ColwiseParallel({style})' for p in "qkv")
        return f"parallelize_module({layer}, {TP}, {{{plan}}})"

    def LayerNorm(self, call, sp: bool, shard: str) -> str | None:
        args = [call.args["normalized_shape"]] if "normalized_shape" in call.args else []
        args += [
            f"{n}={call.args[n]}"
            for n in ("eps", "elementwise_affine", "bias", "dtype")
            if n in call.args
        ]
        layer = f"torch.nn.LayerNorm({', '.join(args)})"
        if sp is False:
            return layer
        dim = shard[len("Shard(") : -1]
        sharded = f"parallelize_module({layer}, {TP}, SequenceParallel(sequence_dim={dim}, use_local_output=True))"
        return sharded if sp is True else f"({sharded} if {sp} else {layer})"
