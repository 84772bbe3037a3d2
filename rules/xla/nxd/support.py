"""What the NeuronX Distributed rules (NM313-NM319) share: the companion module they write, the
names each rule migrates (NM313 reports every other NxD use), and a visitor base that reports
every use of a rule's names: a call it can rewrite, a call it cannot (with the reason), and any
other reference (`isinstance(m, ColumnParallelLinear)`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule, matches_name

# the companion module: a plain-PyTorch module that holds the device mesh (and NxD's mappings,
# QKV projection, checkpoint helpers written out), imported by the migrated code
MESH = "parallel_mesh"
MESH_IMPORT = f"import {MESH}"
_COMPANION = Path(__file__).with_name(f"{MESH}.py")


def companion() -> tuple[str, str]:
    return MESH, _COMPANION.read_text(encoding="utf-8")


def nxd(*names: str) -> tuple[str, ...]:
    """`neuronx_distributed.**.<name>`: the name wherever NxD defines or re-exports it."""
    return tuple(f"neuronx_distributed.**.{name}" for name in names)


LAYERS = nxd(
    "ColumnParallelLinear",
    "RowParallelLinear",
    "ParallelEmbedding",
    "GQAQKVColumnParallelLinear",
    "layer_norm.LayerNorm",
)
STATE = nxd(
    "parallel_state.initialize_model_parallel",
    "parallel_state.model_parallel_is_initialized",
    "parallel_state.destroy_model_parallel",
    "parallel_state.get_tensor_model_parallel_size",
    "parallel_state.get_tensor_model_parallel_rank",
    "parallel_state.get_tensor_model_parallel_group",
    "parallel_state.get_data_parallel_size",
    "parallel_state.get_data_parallel_rank",
    "parallel_state.get_data_parallel_group",
    "parallel_state.get_world_group",
    "parallel_state.get_pipeline_model_parallel_size",
    "parallel_state.get_pipeline_model_parallel_rank",
    "parallel_state.get_context_model_parallel_size",
    "parallel_state.get_context_model_parallel_rank",
    "parallel_state.get_expert_model_parallel_size",
    "parallel_state.get_expert_model_parallel_rank",
    "parallel_state.rmsg",
    "utils.divide",
)
MAPPINGS = nxd(
    "mappings.copy_to_tensor_model_parallel_region",
    "mappings.reduce_from_tensor_model_parallel_region",
    "mappings.scatter_to_tensor_model_parallel_region",
    "mappings.gather_from_tensor_model_parallel_region",
    "mappings.scatter_to_sequence_parallel_region",
    "mappings.gather_from_sequence_parallel_region",
    "mappings.reduce_scatter_to_sequence_parallel_region",
)
HELPERS = nxd(
    "grads.clip_grad_norm",
    "random.model_parallel_xla_manual_seed",
    "move_model_to_device",
    "loss_functions.parallel_cross_entropy",
    "model_utils.init_on_device",
    "utils.logger.get_logger",
)
TRAINER = nxd(
    "neuronx_distributed_config", "initialize_parallel_model", "initialize_parallel_optimizer"
)
CHECKPOINT = nxd(
    "save_checkpoint",
    "load_checkpoint",
    "has_checkpoint",
    "finalize_checkpoint",
    "checkpointing.save",
    "checkpointing.load",
)
# every name a rule other than NM313 reports
COVERED = LAYERS + STATE + MAPPINGS + HELPERS + TRAINER + CHECKPOINT
# the parallel_layers package re-exports these at its top (neuronx_distributed.parallel_layers.X)
REEXPORTS = {
    "clip_grad_norm": "grads.clip_grad_norm",
    "model_parallel_xla_manual_seed": "random.model_parallel_xla_manual_seed",
    "initialize_model_parallel": "parallel_state.initialize_model_parallel",
    "parallel_cross_entropy": "loss_functions.parallel_cross_entropy",
    "save": "checkpointing.save",
    "load": "checkpointing.load",
}
# functions the companion module defines with NxD's name and parameters: a reference that is not
# a call (`loss_fct = parallel_cross_entropy`) becomes a reference to the companion's
SAME_SIGNATURE = frozenset({"parallel_cross_entropy", "rmsg", "init_on_device", "get_logger"})


# NxD's modules: a reference to one alone is the head of a longer chain that another rule (or
# NM313 on the whole chain) reports, or an import; never a use of its own
MODULES = frozenset(
    {
        "neuronx_distributed",
        "parallel_layers",
        "parallel_state",
        "layers",
        "mappings",
        "utils",
        "grads",
        "random",
        "checkpointing",
        "layer_norm",
        "trainer",
        "modules",
        "qkv_linear",
        "model_utils",
        "loss_functions",
        "logger",
    }
)


def covered(qname: str) -> bool:
    if qname.rsplit(".", 1)[-1] in MODULES:
        return True
    return matches_name(qname, COVERED) or any(
        qname.endswith(f"parallel_layers.{short}") for short in REEXPORTS
    )


class Call:
    """A call's arguments as code, by NxD's parameter names (positional ones mapped by order)."""

    def __init__(self, node: cst.Call, code: Callable[[cst.CSTNode], str], params: tuple[str, ...]):
        self.node = node
        self.args: dict[str, str] = {}
        self.nodes: dict[str, cst.BaseExpression] = {}
        self.problem: str | None = None
        position = 0
        for arg in node.args:
            if arg.star:
                self.problem = "it passes *args or **kwargs"
                return
            if arg.keyword is None:
                if position >= len(params):
                    self.problem = "it passes more positional arguments than NxD's signature"
                    return
                name = params[position]
                position += 1
            else:
                name = arg.keyword.value
            self.args[name] = code(arg.value)
            self.nodes[name] = arg.value

    def flag(self, name: str, default: bool) -> bool | None:
        """A literal True/False argument (the default when absent); None for anything else."""
        if name not in self.args:
            return default
        return {"True": True, "False": False}.get(self.args[name])

    def unknown(self, allowed: tuple[str, ...]) -> list[str]:
        return [name for name in self.args if name not in allowed]


class NxdRule(CodeRule):
    """Reports every use of `NAMES`. Subclasses give `rewrite(call, qname)`, which returns an edit
    (via self.ctx) or the reason the call stays manual."""

    NAMES: tuple[str, ...] = ()

    def applies(self) -> bool:
        # every use these rules rewrite resolves through a neuronx_distributed import
        return self.ctx.imports_module("neuronx_distributed")

    def __init__(self, *args) -> None:
        super().__init__(*args)
        # the engine does not descend into import statements, so their names never reach here
        self.skip: set[int] = set()
        self.short_names = {name.rsplit(".", 1)[-1] for name in self.NAMES} | set(REEXPORTS)

    def matches(self, qname: str | None) -> bool:
        if qname is None or not qname.startswith("neuronx_distributed."):
            return False
        for short, full in REEXPORTS.items():
            if qname.endswith(f"parallel_layers.{short}"):
                qname = qname[: -len(short)] + full
        return matches_name(qname, self.NAMES)

    def visit_Call(self, node: cst.Call) -> None:
        qname = self.ctx.qname(node.func)
        if not self.matches(qname):
            return
        self.skip.add(id(node.func))
        outcome = self.rewrite(node, qname)
        if isinstance(outcome, str):
            self.report(node, case="manual", variables={"reason": outcome})
        else:
            self.report(node, case="fix", edits=[outcome])

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.skip.add(id(node.attr))
        self._reference(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def _reference(self, node: cst.CSTNode) -> None:
        if id(node) in self.skip:
            return
        # resolve only names that can be ours: resolving marks a name as read, and an
        # assignment target (`xm = None`) must not count as a use of an import
        last = node.attr.value if isinstance(node, cst.Attribute) else getattr(node, "value", "")
        if last not in self.short_names:
            return
        qname = self.ctx.qname(node)
        if self.matches(qname):
            self.skip.add(id(node))
            short = qname.rsplit(".", 1)[-1]
            if short in SAME_SIGNATURE:
                edit = self.fix(node, f"{MESH}.{short}", [MESH_IMPORT])
                self.report(node, case="fix", edits=[edit])
            else:
                self.report(node, case="reference")

    def rewrite(self, node: cst.Call, qname: str):  # pragma: no cover - subclasses
        raise NotImplementedError

    def fix(self, node: cst.CSTNode, code: str, imports: list[str]):
        return self.ctx.replace(node, code, imports=imports, companion=companion())


def same_signature(rule: NxdRule, node: cst.Call, short: str):
    """A call of an NxD function the companion defines with the same name and parameters."""
    if any(arg.star for arg in node.args):
        return "it passes *args or **kwargs"
    return rule.fix(node.func, f"{MESH}.{short}", [MESH_IMPORT])


def call_code(func: str, call: Call, params: tuple[str, ...], positional: int = 0) -> str:
    """`func(...)` with the call's arguments among `params`: the first `positional` by position,
    the rest as keywords, in NxD's order."""
    parts = []
    for index, name in enumerate(params):
        if name in call.args:
            parts.append(call.args[name] if index < positional else f"{name}={call.args[name]}")
    return f"{func}({', '.join(parts)})"
