"""NM317 nxd-training-helpers: grads.clip_grad_norm, model_parallel_xla_manual_seed,
move_model_to_device and parallel_cross_entropy in native PyTorch."""

from __future__ import annotations

import libcst as cst

from .nxd import support

CLIP = ("parameters", "max_norm", "norm_type")
LOSS = ("vocab_parallel_logits", "target", "label_smoothing")


REDUCE_GRADIENTS = "torch_xla.core.xla_model.reduce_gradients"
ALL_REDUCE = "torch_xla.core.xla_model.all_reduce"
REDUCE_OPS = {f"torch_xla.core.xla_model.REDUCE_{op}": op.lower() for op in ("SUM", "MAX", "MIN")}
# NxD's XLA replica groups of one mesh dimension
GROUPS = {
    "get_data_parallel_replica_groups": "dp",
    "get_data_parallel_group": "dp",
    "get_tensor_model_parallel_replica_groups": "tp",
    "get_tensor_model_parallel_group": "tp",
}


class TrainingHelpers(support.NxdRule):
    NAMES = support.HELPERS

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        qname = self.ctx.qname(node.func)
        if qname == REDUCE_GRADIENTS:
            self._reduce_gradients(node)
        elif qname == ALL_REDUCE:
            self._all_reduce(node)

    def _group_dim(self, groups: cst.BaseExpression | None) -> str | None:
        """ "dp" / "tp" when `groups` is a call of NxD's replica groups of that dimension."""
        if not isinstance(groups, cst.Call):
            return None
        qname = self.ctx.qname(groups.func) or ""
        short = qname.rsplit(".", 1)[-1]
        if short not in GROUPS or not qname.startswith("neuronx_distributed."):
            return None
        if short.endswith("_group") and [self.ctx.code(a.value) for a in groups.args] != ["True"]:
            return None  # without as_list=True it is a ProcessGroup, not replica groups
        return GROUPS[short]

    def _all_reduce(self, node: cst.Call) -> None:
        """`xm.all_reduce(xm.REDUCE_SUM, t, groups=<NxD groups>)` returns a reduced copy of one
        tensor: parallel_mesh.all_reduce(t, "dp")."""
        call = support.Call(
            node, self.ctx.code, ("reduce_type", "inputs", "scale", "groups", "pin_layout")
        )
        if call.problem or set(call.args) - {"reduce_type", "inputs", "groups", "pin_layout"}:
            return
        op = REDUCE_OPS.get(self.ctx.qname(call.nodes.get("reduce_type")) or "")
        dim = self._group_dim(call.nodes.get("groups"))
        tensor = call.nodes.get("inputs")
        if op is None or dim is None or isinstance(tensor, (cst.List, cst.Tuple)):
            return
        self.skip.add(id(call.nodes["groups"].func))
        op_arg = "" if op == "sum" else f', op="{op}"'
        code = f'{support.MESH}.all_reduce({call.args["inputs"]}, "{dim}"{op_arg})'
        self.report(node, case="fix", edits=[self.fix(node, code, [support.MESH_IMPORT])])

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
        if self._group_dim(groups) != "dp":
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
        if short in ("init_on_device", "get_logger"):
            return support.same_signature(self, node, short)
        if short == "parallel_cross_entropy":
            call = support.Call(node, self.ctx.code, LOSS)
            if call.problem:
                return call.problem
            if call.args.get("label_smoothing", "0.0") not in ("0", "0.0"):
                return "NxD smoothed labels over each rank's vocabulary shard, which F.cross_entropy's `label_smoothing` does not reproduce"
            code = support.call_code(f"{support.MESH}.parallel_cross_entropy", call, LOSS, 2)
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
