"""NM205 compile-model: in a file that ran lazily (mark_step / sync / step), each module moved to
the device may be compiled right after the move."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule, matches_name

_DTYPE_HINTS = ("float", "half", "bfloat", "int", "double", "bool", "complex", "dtype")


def _to_device_call(node: cst.BaseExpression) -> cst.Call | None:
    """`<x>.to(<device>)`: one positional argument that does not look like a dtype, or device=."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return None
    if node.func.attr.value != "to" or not node.args:
        return None
    first = node.args[0]
    if first.keyword is not None:
        return node if first.keyword.value == "device" else None
    value = first.value
    tail = value.attr.value if isinstance(value, cst.Attribute) else getattr(value, "value", "")
    if isinstance(value, (cst.Name, cst.Attribute)) and tail.lower().startswith(_DTYPE_HINTS):
        return None
    return node


def _is_constructor(node: cst.BaseExpression) -> bool:
    """`Net(...)` or `models.Net(...)`: a capitalised callee, as classes are named."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
    return isinstance(name, str) and name[:1].isupper()


def placed_module(node: cst.BaseSmallStatement) -> str | None:
    """The name of a module moved to a device: `model.to(device)` as a statement (a tensor's
    .to() returns a copy, so only modules are moved that way), or `model = Net(...).to(device)`."""
    if isinstance(node, cst.Expr):
        call = _to_device_call(node.value)
        if call is not None and isinstance(call.func.value, cst.Name):
            return call.func.value.value
        return None
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        target = node.targets[0].target
        call = _to_device_call(node.value)
        if isinstance(target, cst.Name) and call is not None and _is_constructor(call.func.value):
            return target.value
    return None


class CompileModel(CodeRule):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.placements: list[tuple[cst.BaseSmallStatement, str, tuple[int, ...]]] = []
        self.compiled: set[str] = set()  # names given to torch.compile: already compiled

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qname(node.func) == "torch.compile" and node.args:
            first = node.args[0].value
            if isinstance(first, cst.Name):
                self.compiled.add(first.value)

    def _placement(self, node: cst.BaseSmallStatement) -> None:
        target = placed_module(node)
        if target is not None:
            self.placements.append((node, target, self.ctx.statements))

    leave_Expr = _placement
    leave_Assign = _placement

    def leave_Module(self, node: cst.Module) -> None:
        lazy = self.pattern("manual").names
        if not any(matches_name(called, lazy) for called in self.ctx.called):
            return
        compile_on = self.ctx.setting("compile")
        for statement, target, statements in self.placements:
            if target in self.compiled:
                continue
            variables = {"target": target, "name": target, "qname": ""}
            if not compile_on:
                self.report(statement, case="manual", variables=variables, statements=statements)
                continue
            backend = self.ctx.target.placeholders()["backend"]
            code = f"{target} = torch.compile({target}, backend={backend}, dynamic=False)"
            edit = self.ctx.insert_after(statement, code, imports=["import torch"])
            self.report(
                statement, case="compile", edits=[edit], variables=variables, statements=statements
            )
