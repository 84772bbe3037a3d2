"""NM317 nxd-training-helpers: grads.clip_grad_norm, model_parallel_xla_manual_seed and
move_model_to_device in native PyTorch."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import libcst as cst

from neuron_migrate.engine.coderule import matches_name


def _support():
    name = "neuron_migrate_rules.xla.nxd_support"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).parent / "nxd" / "support.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


support = _support()

CLIP = ("parameters", "max_norm", "norm_type")


REDUCE_GRADIENTS = "torch_xla.core.xla_model.reduce_gradients"
# NxD's data-parallel groups as XLA replica groups
DP_GROUPS = support.nxd(
    "parallel_state.get_data_parallel_replica_groups", "parallel_state.get_data_parallel_group"
)


class TrainingHelpers(support.NxdRule):
    NAMES = support.HELPERS

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        if self.ctx.qname(node.func) == REDUCE_GRADIENTS:
            self._reduce_gradients(node)

    def _reduce_gradients(self, node: cst.Call) -> None:
        """`xm.reduce_gradients(opt, groups=<NxD's data-parallel groups>)`: the gradient average
        over "dp" (with other groups it is NM309's)."""
        call = support.Call(node, self.ctx.code, ("optimizer", "groups", "pin_layout"))
        groups = call.nodes.get("groups")
        if (
            call.problem
            or not isinstance(groups, cst.Call)
            or set(call.args) - {"optimizer", "groups"}
        ):
            return
        if not matches_name(self.ctx.qname(groups.func) or "", DP_GROUPS):
            return
        if groups.args and self.ctx.code(groups.args[0].value) not in ("True", "as_list=True"):
            return
        self.skip.add(id(groups.func))
        code = f"{support.MESH}.reduce_gradients({call.args['optimizer']})"
        self.report(node, case="fix", edits=[self.fix(node, code, [support.MESH_IMPORT])])

    def rewrite(self, node: cst.Call, qname: str):
        short = qname.rsplit(".", 1)[1]
        if short == "clip_grad_norm":
            call = support.Call(
                node,
                self.ctx.code,
                (*CLIP, "zero1_optimizer", "zero1_optimizer_groups", "force_spmd"),
            )
            if call.problem:
                return call.problem
            if call.args.get("zero1_optimizer", "False") != "False":
                return "`zero1_optimizer=True`: clip after FSDP2's fully_shard instead (parallel_mesh.clip_grad_norm)"
            code = support.call_code(f"{support.MESH}.clip_grad_norm", call, CLIP, positional=2)
            return self.fix(node, code, [support.MESH_IMPORT])
        if short == "model_parallel_xla_manual_seed":
            call = support.Call(node, self.ctx.code, ("seed",))
            if call.problem or "seed" not in call.args:
                return call.problem or "no seed is given"
            return self.fix(node, f"torch.manual_seed({call.args['seed']})", ["import torch"])
        call = support.Call(node, self.ctx.code, ("model", "device"))
        if call.problem or len(call.args) != 2:
            return call.problem or "it does not pass a model and a device"
        return self.fix(node, f"{call.args['model']}.to({call.args['device']})", [])
