"""NM309 xla-collectives: the one form of `xm.all_reduce` with an exact `dist` spelling."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context

# xm's reduce types -> torch.distributed.ReduceOp members
REDUCE_OPS = {
    "torch_xla.core.xla_model.REDUCE_SUM": "SUM",
    "torch_xla.core.xla_model.REDUCE_MAX": "MAX",
    "torch_xla.core.xla_model.REDUCE_MIN": "MIN",
    "torch_xla.core.xla_model.REDUCE_MUL": "PRODUCT",
}


def reduce_into_first_arg(node: cst.CSTNode, ctx: Context) -> dict[str, str] | None:
    """`t = xm.all_reduce(xm.REDUCE_<op>, t)`: the result replaces the one tensor it was given,
    as `dist.all_reduce(t, op=...)` does in place. Gives the template its {op}."""
    if not isinstance(node, cst.Call):
        return None
    positional = [a for a in node.args if a.keyword is None]
    if len(positional) < 2:
        return None
    op = REDUCE_OPS.get(ctx.qname(positional[0].value) or "")
    context, owner = ctx.where(node)
    if op is None or context != "assigned" or len(owner.targets) != 1:
        return None
    target = owner.targets[0].target
    tensor = positional[1].value
    if (
        isinstance(target, cst.Name)
        and isinstance(tensor, cst.Name)
        and tensor.value == target.value
    ):
        return {"op": op}
    return None
