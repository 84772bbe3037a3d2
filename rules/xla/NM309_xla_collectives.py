"""NM309 xla-collectives: the forms of XLA's collectives with an exact `torch.distributed`
spelling.

Predicates pick the data patterns' forms (`t = xm.all_reduce(op, t)` in place; a list reduced
in place by a statement). The visitor rewrites the forms whose result is a new value, which
`dist` (always in place) cannot give as an expression, by writing the collective on its own
lines before the statement that uses the result:

* `x = xm.mesh_reduce(tag, data, fn)` -> `all_gather_object` into a list, then `x = fn(list)`
* `x = xm.all_gather(t, dim=d)` -> `dist.all_gather` into a list of tensors, `torch.cat(..., d)`
* `... xm.all_reduce(op, t[, scale=s]) ...` inside an expression -> `dist.all_reduce` of a
  clone, then the statement uses the clone
"""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule, Context, keyword_arg

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


def reduce_in_place(node: cst.CSTNode, ctx: Context) -> dict[str, str] | None:
    """`xm.all_reduce(xm.REDUCE_<op>, tensors, ...)` as a statement: xm reduced the list in place
    (for one tensor it returned a new one, which a statement drops). Gives the template {op}."""
    if not isinstance(node, cst.Call):
        return None
    positional = [a for a in node.args if a.keyword is None]
    if len(positional) < 2 or ctx.where(node)[0] != "statement":
        return None
    op = REDUCE_OPS.get(ctx.qname(positional[0].value) or "")
    return {"op": op} if op else None


XM = "torch_xla.core.xla_model."
IMPORTS = ("import torch", "import torch.distributed as dist")


def _positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def _assigned_name(call: cst.Call, ctx: Context) -> str | None:
    """`name = <call>`: the one plain name the call's result is assigned to."""
    context, owner = ctx.where(call)
    if context != "assigned" or len(owner.targets) != 1:
        return None
    target = owner.targets[0].target
    return target.value if isinstance(target, cst.Name) else None


def _plain(call: cst.Call, allowed: set[str]) -> bool:
    """Only these keywords (no groups=, output=, pin_layout=...)."""
    return all(a.keyword is None or a.keyword.value in allowed for a in call.args)


def new_value_form(node: cst.CSTNode, ctx: Context) -> str | None:
    """Which of the visitor's forms a call is ("mesh_reduce", "all_gather", "all_reduce"), or
    None."""
    if not isinstance(node, cst.Call):
        return None
    qname = ctx.qname(node.func) or ""
    if not qname.startswith(XM):
        return None
    name = qname[len(XM) :]
    args = _positional(node)
    if name == "mesh_reduce" and len(args) == 3 and _plain(node, set()):
        return name if _assigned_name(node, ctx) else None
    if name == "all_gather" and 1 <= len(args) <= 2 and _plain(node, {"dim"}):
        return name if _assigned_name(node, ctx) else None
    if name == "all_reduce" and len(args) == 2 and _plain(node, {"scale"}):
        context, _ = ctx.where(node)
        in_place = reduce_into_first_arg(node, ctx) is not None
        if (
            context != "statement"
            and not in_place
            and REDUCE_OPS.get(ctx.qname(args[0].value) or "")
        ):
            return name
    return None


def left_to_you(node: cst.CSTNode, ctx: Context) -> bool:
    """The manual pattern: every collective call the visitor does not rewrite."""
    return new_value_form(node, ctx) is None


class NewValueCollectives(CodeRule):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.lines: list[cst.SimpleStatementLine] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.lines.append(node)

    def leave_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.lines.pop()

    def visit_Call(self, node: cst.Call) -> None:
        form = new_value_form(node, self.ctx)
        if form is None or not self.lines or len(self.lines[-1].body) != 1:
            return
        statement = self.lines[-1].body[0]
        code = self.ctx.code
        args = [code(a.value) for a in _positional(node)]
        if form == "mesh_reduce":
            target = _assigned_name(node, self.ctx)
            parts = f"{target}_parts"
            reduce_fn = args[2]
            if not isinstance(_positional(node)[2].value, (cst.Name, cst.Attribute)):
                reduce_fn = f"({reduce_fn})"  # a lambda
            new = (
                f"{parts} = [None] * dist.get_world_size()\n"
                f"dist.all_gather_object({parts}, {args[1]})\n"
                f"{target} = {reduce_fn}({parts})"
            )
        elif form == "all_gather":
            target = _assigned_name(node, self.ctx)
            parts = f"{target}_parts"
            dim = keyword_arg(node, "dim")
            dim_code = code(dim.value) if dim else (args[1] if len(args) > 1 else "0")
            tensor, first = args[0], ""
            if not isinstance(_positional(node)[0].value, cst.Name):
                tensor = f"{target}_local"
                first = f"{tensor} = {args[0]}\n"
            new = (
                first
                + f"{parts} = [torch.empty_like({tensor}) for _ in range(dist.get_world_size())]\n"
                f"dist.all_gather({parts}, {tensor})\n"
                f"{target} = torch.cat({parts}, dim={dim_code})"
            )
        else:
            op = REDUCE_OPS[self.ctx.qname(_positional(node)[0].value)]
            scale = keyword_arg(node, "scale")
            rest = code(statement).replace(code(node), "reduced", 1)
            new = f"reduced = {args[1]}.clone()\ndist.all_reduce(reduced, op=dist.ReduceOp.{op})\n"
            if scale is not None:
                new += f"reduced.mul_({code(scale.value)})\n"
            new += rest
        self.report(
            node,
            case="new-value",
            edits=[self.ctx.replace_statement(statement, new, IMPORTS)],
        )
