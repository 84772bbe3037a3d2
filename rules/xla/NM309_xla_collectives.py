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
* `x = xm.reduce_scatter(op, t, scale, dim, n)` -> `dist.reduce_scatter_single` into a new
  tensor of the shard's shape (`dim` moved first and back when it is not 0)

and every form, `xm.reduce_gradients(opt, groups=...)` too, with XLA replica groups written as a
literal (`groups=[[0, 1], [2, 3]]`): the collective runs on `replica_group(groups)`, a helper
written once below the imports that makes every group with `dist.new_group`, on every rank and
in the same order, the first time those groups are used, and gives this rank's group.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule, Context, string_value

XM = "torch_xla.core.xla_model."
# xm's reduce types (constants or their string values) -> torch.distributed.ReduceOp members
REDUCE_TYPES = {
    "sum": "SUM",
    "mul": "PRODUCT",
    "and": "BAND",
    "or": "BOR",
    "min": "MIN",
    "max": "MAX",
}
REDUCE_OPS = {f"{XM}REDUCE_{k.upper()}": v for k, v in REDUCE_TYPES.items()}
IMPORTS = ("import torch", "import torch.distributed as dist")
LEGACY = ("torch_xla", "torch_neuronx")
# the parameters of xm's collectives, in order
PARAMS = {
    "all_reduce": ("reduce_type", "inputs", "scale", "groups", "pin_layout"),
    "all_gather": ("value", "dim", "groups", "output", "pin_layout"),
    "reduce_scatter": (
        "reduce_type",
        "input",
        "scale",
        "scatter_dim",
        "shard_count",
        "groups",
        "output",
        "pin_layout",
    ),
    "reduce_gradients": ("optimizer", "groups", "pin_layout"),
    "mesh_reduce": ("tag", "data", "reduce_fn"),
}
HELPER = "replica_group"
HELPER_CODE = f'''
def {HELPER}(groups):
    """This rank's process group among XLA replica groups (lists of global ranks, as
    torch_xla's `groups=` gave them). Every rank makes every group with `dist.new_group`, in
    the same order, the first time these groups are used; a rank in none of them is an error."""
    made = vars({HELPER}).setdefault("made", {{}})
    key = tuple(tuple(ranks) for ranks in groups)
    if key not in made:
        groups_made = [(ranks, dist.new_group(list(ranks))) for ranks in key]
        mine = [group for ranks, group in groups_made if dist.get_rank() in ranks]
        made[key] = mine[0] if mine else None
    if made[key] is None:
        raise ValueError(f"rank {{dist.get_rank()}} is in none of the replica groups {{groups}}")
    return made[key]
'''


def reduce_op(node: cst.CSTNode | None, ctx: Context) -> str | None:
    """The `dist.ReduceOp` member of an xm reduce type: `xm.REDUCE_SUM` or `"sum"`."""
    if node is None:
        return None
    value = string_value(node)
    if value is not None:
        return REDUCE_TYPES.get(value)
    return REDUCE_OPS.get(ctx.qname(node) or "")


def _bind(call: cst.Call, params: tuple[str, ...]) -> dict[str, cst.BaseExpression] | None:
    """The call's arguments by parameter name, or None (star arguments, unknown or repeated
    names, too many positional arguments)."""
    bound: dict[str, cst.BaseExpression] = {}
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if position >= len(params):
                return None
            name = params[position]
            position += 1
        else:
            name = arg.keyword.value
            if name not in params:
                return None
        if name in bound:
            return None
        bound[name] = arg.value
    return bound


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def replica_groups(node: cst.BaseExpression | None) -> list[list[int]] | None:
    """XLA replica groups written as a literal: `[[0, 1], [2, 3]]` (lists or tuples of integer
    literals, each rank once). `None` and `[]` (no groups: every rank) give []. Anything else
    (a name, a call) gives None: it cannot be read here."""
    if node is None or _is_none(node):
        return []
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    groups: list[list[int]] = []
    for element in node.elements:
        if not isinstance(element, cst.Element) or not isinstance(
            element.value, (cst.List, cst.Tuple)
        ):
            return None
        ranks = []
        for item in element.value.elements:
            if not isinstance(item, cst.Element) or not isinstance(item.value, cst.Integer):
                return None
            ranks.append(int(item.value.evaluated_value))
        if not ranks:
            return None
        groups.append(ranks)
    flat = [rank for ranks in groups for rank in ranks]
    return groups if len(flat) == len(set(flat)) else None


def _ordered(groups: list[list[int]]) -> bool:
    """Groups whose members are listed in rank order, all of one size: a gather or a scatter
    then puts shard i on the group's i-th rank, as `dist.new_group` (which sorts) numbers them."""
    return all(r == sorted(r) for r in groups) and len({len(r) for r in groups}) <= 1


def _assigned_name(call: cst.Call, ctx: Context) -> str | None:
    """`name = <call>`: the one plain name the call's result is assigned to."""
    context, owner = ctx.where(call)
    if context != "assigned" or len(owner.targets) != 1:
        return None
    target = owner.targets[0].target
    return target.value if isinstance(target, cst.Name) else None


def reduce_into_first_arg(node: cst.CSTNode, ctx: Context) -> dict[str, str] | None:
    """`t = xm.all_reduce(xm.REDUCE_<op>, t)`: the result replaces the one tensor it was given,
    as `dist.all_reduce(t, op=...)` does in place. Gives the template its {op}."""
    if not isinstance(node, cst.Call):
        return None
    args = _bind(node, PARAMS["all_reduce"])
    if args is None or set(args) != {"reduce_type", "inputs"}:
        return None
    op = reduce_op(args["reduce_type"], ctx)
    target = _assigned_name(node, ctx)
    tensor = args["inputs"]
    if op and target and isinstance(tensor, cst.Name) and tensor.value == target:
        return {"op": op}
    return None


def reduce_in_place(node: cst.CSTNode, ctx: Context) -> dict[str, str] | None:
    """`xm.all_reduce(xm.REDUCE_<op>, tensors[, scale=s])` as a statement: xm reduced the list in
    place (for one tensor it returned a new one, which a statement drops). Gives the template
    {op}."""
    if not isinstance(node, cst.Call) or ctx.where(node)[0] != "statement":
        return None
    positional = [a for a in node.args if a.keyword is None]
    args = _bind(node, PARAMS["all_reduce"])
    if args is None or len(positional) != 2 or set(args) - {"reduce_type", "inputs", "scale"}:
        return None
    op = reduce_op(args["reduce_type"], ctx)
    return {"op": op} if op else None


@dataclass
class Form:
    """A call the visitor rewrites: which form, its arguments by name, the replica groups."""

    name: str
    args: dict[str, cst.BaseExpression]
    groups: list[list[int]]


def form_of(node: cst.CSTNode, ctx: Context) -> Form | None:
    """The visitor's form of a call, or None (a data pattern's, or manual)."""
    if not isinstance(node, cst.Call):
        return None
    qname = ctx.qname(node.func) or ""
    name = qname[len(XM) :] if qname.startswith(XM) else ""
    if name not in PARAMS:
        return None
    args = _bind(node, PARAMS[name])
    if args is None or "pin_layout" in args or "output" in args:
        return None
    groups = replica_groups(args.get("groups"))
    if groups is None:
        return None
    if groups and ctx.helper_anchor(HELPER, leaving=LEGACY) is None:
        return None  # nowhere to write the helper (or the module has its own)
    context = ctx.where(node)[0]
    if name == "mesh_reduce":
        ok = len(args) == 3 and _assigned_name(node, ctx)
    elif name == "all_gather":
        ok = "value" in args and _assigned_name(node, ctx) and _ordered(groups)
    elif name == "reduce_scatter":
        ok = (
            len(set(PARAMS[name][:5]) - set(args)) == 0
            and _assigned_name(node, ctx)
            and reduce_op(args["reduce_type"], ctx)
            and not isinstance(args["input"], (cst.List, cst.Tuple))
            and _ordered(groups)
        )
    elif name == "reduce_gradients":
        ok = context == "statement" and "optimizer" in args and "groups" in args
    else:
        ok = {"reduce_type", "inputs"} <= set(args) and reduce_op(args["reduce_type"], ctx)
        if ok and context == "statement":
            # a list reduced in place (with `scale=` alone it is the data pattern's)
            name = "all_reduce_list"
            ok = reduce_in_place(node, ctx) is None
        elif ok and reduce_into_first_arg(node, ctx) is not None:
            ok = False  # the data pattern's
        elif ok and "groups" in args and "scale" not in args:
            target = _assigned_name(node, ctx)
            tensor = args["inputs"]
            if target and isinstance(tensor, cst.Name) and tensor.value == target:
                name = "all_reduce_in_place"
    return Form(name, args, groups) if ok else None


def left_to_you(node: cst.CSTNode, ctx: Context) -> bool:
    """The manual pattern: every collective call the visitor does not rewrite."""
    return form_of(node, ctx) is None


def _atom(node: cst.BaseExpression, code) -> str:
    """The expression as written, in parentheses unless a method can be called on it as is."""
    text = code(node)
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or node.lpar:
        return text
    return f"({text})"


def _scaled(name: str, scale: cst.BaseExpression | None, code) -> str:
    """`name.mul_(scale)` on a line of its own, or nothing for no scale or a scale of 1."""
    if scale is None or (
        isinstance(scale, (cst.Integer, cst.Float)) and scale.evaluated_value == 1
    ):
        return ""
    return f"{name}.mul_({code(scale)})\n"


class Collectives(CodeRule):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.lines: list[cst.SimpleStatementLine] = []
        # findings that use replica groups: written in leave_Module, with the helper
        self.grouped: list[tuple[cst.Call, str, list, tuple[int, ...]]] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.lines.append(node)

    def leave_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.lines.pop()

    def visit_Call(self, node: cst.Call) -> None:
        form = form_of(node, self.ctx)
        if form is None or not self.lines or len(self.lines[-1].body) != 1:
            return
        statement = self.lines[-1].body[0]
        group = ""
        if form.groups:
            group = f"{HELPER}({self.ctx.code(form.args['groups'])})"
        new = getattr(self, f"_{form.name}")(node, form, statement, group)
        edits = [self.ctx.replace_statement(statement, new, IMPORTS)]
        if "groups" in form.args:
            case = "replica-groups"
        elif form.name == "reduce_scatter":
            case = "reduce-scatter"
        else:
            case = "new-value"
        if group:
            self.grouped.append((node, case, edits, self.ctx.statements))
        else:
            self.report(node, case=case, edits=edits)

    def leave_Module(self, node: cst.Module) -> None:
        if not self.grouped:
            return
        anchor = self.ctx.helper_anchor(HELPER, leaving=LEGACY)
        for index, (call, case, edits, statements) in enumerate(self.grouped):
            if index == 0:
                helper = self.ctx.insert_after(
                    anchor.body[-1], HELPER_CODE, ("import torch.distributed as dist",)
                )
                edits = [*edits, helper]
                statements = (*statements, id(anchor))
            self.report(call, case=case, edits=edits, statements=statements)

    # ---- the forms: each gives the statements that replace the call's statement ----

    def _mesh_reduce(self, node, form: Form, statement, group: str) -> str:
        code = self.ctx.code
        target = _assigned_name(node, self.ctx)
        parts = f"{target}_parts"
        reduce_fn = code(form.args["reduce_fn"])
        if not isinstance(form.args["reduce_fn"], (cst.Name, cst.Attribute)):
            reduce_fn = f"({reduce_fn})"  # a lambda
        return (
            f"{parts} = [None] * dist.get_world_size()\n"
            f"dist.all_gather_object({parts}, {code(form.args['data'])})\n"
            f"{target} = {reduce_fn}({parts})"
        )

    def _all_gather(self, node, form: Form, statement, group: str) -> str:
        code = self.ctx.code
        target = _assigned_name(node, self.ctx)
        parts = f"{target}_parts"
        dim = form.args.get("dim")
        dim_code = code(dim) if dim is not None else "0"
        value = form.args["value"]
        tensor, first = code(value), ""
        if not isinstance(value, cst.Name):
            tensor = f"{target}_local"
            first = f"{tensor} = {code(value)}\n"
        size, on = "dist.get_world_size()", ""
        if group:
            first += f"{target}_group = {group}\n"
            size, on = f"dist.get_world_size({target}_group)", f", group={target}_group"
        return (
            first + f"{parts} = [torch.empty_like({tensor}) for _ in range({size})]\n"
            f"dist.all_gather({parts}, {tensor}{on})\n"
            f"{target} = torch.cat({parts}, dim={dim_code})"
        )

    def _all_reduce(self, node, form: Form, statement, group: str) -> str:
        code = self.ctx.code
        op = reduce_op(form.args["reduce_type"], self.ctx)
        on = f", group={group}" if group else ""
        rest = code(statement).replace(code(node), "reduced", 1)
        return (
            f"reduced = {_atom(form.args['inputs'], code)}.clone()\n"
            f"dist.all_reduce(reduced, op=dist.ReduceOp.{op}{on})\n"
            + _scaled("reduced", form.args.get("scale"), code)
            + rest
        )

    def _all_reduce_in_place(self, node, form: Form, statement, group: str) -> str:
        op = reduce_op(form.args["reduce_type"], self.ctx)
        on = f", group={group}" if group else ""
        return f"dist.all_reduce({self.ctx.code(form.args['inputs'])}, op=dist.ReduceOp.{op}{on})"

    def _all_reduce_list(self, node, form: Form, statement, group: str) -> str:
        code = self.ctx.code
        op = reduce_op(form.args["reduce_type"], self.ctx)
        on = f", group={group}" if group else ""
        scale = _scaled("tensor", form.args.get("scale"), code)
        return (
            f"for tensor in {code(form.args['inputs'])}:\n"
            f"    dist.all_reduce(tensor, op=dist.ReduceOp.{op}{on})\n"
            + (f"    {scale}" if scale else "")
        )

    def _reduce_gradients(self, node, form: Form, statement, group: str) -> str:
        # xm scaled by 1 / the world size, whatever the groups
        optimizer = self.ctx.code(form.args["optimizer"])
        on = f", group={group}" if group else ""
        return (
            "if dist.is_initialized():\n"
            f'    for grad in [p.grad for g in {optimizer}.param_groups for p in g["params"]'
            " if p.grad is not None]:\n"
            f"        dist.all_reduce(grad, op=dist.ReduceOp.SUM{on})\n"
            "        grad.div_(dist.get_world_size())\n"
        )

    def _reduce_scatter(self, node, form: Form, statement, group: str) -> str:
        code = self.ctx.code
        target = _assigned_name(node, self.ctx)
        op = reduce_op(form.args["reduce_type"], self.ctx)
        on = f", group={group}" if group else ""
        value, dim = form.args["input"], form.args["scatter_dim"]
        count = code(form.args["shard_count"])
        first_dim = isinstance(dim, cst.Integer) and dim.evaluated_value == 0
        lines, source = "", code(value)
        if not first_dim:
            source = f"{target}_input"
            lines = f"{source} = {_atom(value, code)}.movedim({code(dim)}, 0).contiguous()\n"
        elif not isinstance(value, cst.Name):
            source = f"{target}_input"
            lines = f"{source} = {code(value)}\n"
        lines += (
            f"{target} = {source}.new_empty(({source}.shape[0] // {count}, *{source}.shape[1:]))\n"
            f"dist.reduce_scatter_single({target}, {source}, op=dist.ReduceOp.{op}{on})\n"
        )
        if not first_dim:
            lines += f"{target} = {target}.movedim(0, {code(dim)}).contiguous()\n"
        return lines + _scaled(target, form.args["scale"], code)
