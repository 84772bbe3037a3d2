"""NM401 device-loader: a device loader becomes the plain loader, and each `for` loop that
consumes it moves its batch to the device at the top of its body.

When every consuming loop is in the same scope as the loader and unpacks its batch into a tuple
of names (`for x, y in loader`), the loader is unwrapped and the loop moves each name. Any other
shape (a batch that may be a dict or nested, a loader built in one function and consumed in
another, kept on `self`, returned, or consumed by a helper) gets `DeviceLoader(loader, device)`:
a small class the fix writes once at the top of the module, which does what MpDeviceLoader did
(without prefetching) and keeps the batch's structure. With no device given it is manual.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule, matches_name


@dataclass
class _Loader:
    call: cst.Call
    loader: cst.BaseExpression
    device: cst.BaseExpression | None
    name: str | None  # the name it was assigned to; None when it is the loop's iterable
    scope: object
    statements: tuple[int, ...]
    # (loop, statements around it, the names it binds each batch to or None)
    loops: list[tuple[cst.For, tuple[int, ...], str | None]] = field(default_factory=list)


def loop_batch_names(target: cst.BaseExpression, through_enumerate: bool) -> str | None:
    """The names a `for` loop binds each batch to: "x, y" or "batch"; None for other shapes."""
    if through_enumerate:
        if not isinstance(target, cst.Tuple) or len(target.elements) != 2:
            return None
        target = target.elements[1].value
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, (cst.Tuple, cst.List)) and all(
        isinstance(e.value, cst.Name) and not isinstance(e, cst.StarredElement)
        for e in target.elements
    ):
        return ", ".join(e.value.value for e in target.elements)
    return None


HELPER = "DeviceLoader"
HELPER_CODE = f'''
class {HELPER}:
    """What torch_xla's MpDeviceLoader did, without prefetching: iterate `loader` and move each
    batch to `device`, keeping its structure (tensors in tuples, lists, dicts, nested)."""

    def __init__(self, loader, device):
        self.loader = loader
        self.device = device

    def __iter__(self):
        for batch in self.loader:
            yield self.move(batch)

    def __len__(self):
        return len(self.loader)

    def move(self, data):
        if isinstance(data, torch.Tensor):
            return data.to(self.device)
        if isinstance(data, Mapping):
            return {{key: self.move(value) for key, value in data.items()}}
        if isinstance(data, (list, tuple)):
            moved = [self.move(value) for value in data]
            return type(data)(*moved) if hasattr(data, "_fields") else type(data)(moved)
        return data
'''
HELPER_IMPORTS = ("import torch", "from collections.abc import Mapping")


class DeviceLoader(CodeRule):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.names = self.pattern("move").names
        self.loaders: list[_Loader] = []
        self.seen: set[int] = set()

    def _parts(self, node: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression | None] | None:
        """(loader expression, device expression) of a device loader call, or None."""
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "per_device_loader"
            and isinstance(func.value, cst.Call)
        ):
            # pl.ParallelLoader(loader, [device]).per_device_loader(device)
            inner = func.value
            qname = self.ctx.qname(inner.func)
            if qname is None or not matches_name(qname, self.names) or not inner.args:
                return None
            self.seen.add(id(inner))  # part of this loader, not a loader of its own
            return inner.args[0].value, node.args[0].value if node.args else None
        qname = self.ctx.qname(func)
        if qname is None or not matches_name(qname, self.names):
            return None
        if not node.args or node.args[0].keyword is not None:
            return None
        device = None
        for index, arg in enumerate(node.args[1:], start=1):
            if (arg.keyword is None and index == 1) or (
                arg.keyword and arg.keyword.value == "device"
            ):
                device = arg.value
        return node.args[0].value, device

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self.seen:
            return  # already met as the iterable of a `for` loop
        parts = self._parts(node)
        if parts is None:
            return
        context, owner = self.ctx.where(node)
        name = None
        if context == "assigned" and len(owner.targets) == 1:
            target = owner.targets[0].target
            name = target.value if isinstance(target, cst.Name) else None
        self.seen.add(id(node))
        self.loaders.append(_Loader(node, *parts, name, self.ctx.scope, self.ctx.statements))

    def visit_For(self, node: cst.For) -> None:
        iterable = node.iter
        through_enumerate = False
        if (
            isinstance(iterable, cst.Call)
            and isinstance(iterable.func, cst.Name)
            and iterable.func.value == "enumerate"
            and iterable.args
        ):
            iterable, through_enumerate = iterable.args[0].value, True
        loop = (node, self.ctx.statements, loop_batch_names(node.target, through_enumerate))
        if isinstance(iterable, cst.Call):
            # `for b in pl.MpDeviceLoader(...)`: the loop header comes before the call
            parts = self._parts(iterable)
            if parts is not None:
                found = _Loader(iterable, *parts, None, self.ctx.scope, self.ctx.statements)
                found.loops.append(loop)
                self.seen.add(id(iterable))
                self.loaders.append(found)
            return
        if isinstance(iterable, cst.Name):
            for found in reversed(self.loaders):
                if found.name == iterable.value and found.scope is self.ctx.scope:
                    found.loops.append(loop)
                    return

    def leave_Module(self, node: cst.Module) -> None:
        if not self.loaders:
            return
        # below the last import that stays after the migration
        anchor = self.ctx.helper_anchor(HELPER, leaving=("torch_xla", "torch_neuronx"))
        helper_written = False
        for found in self.loaders:
            variables = {
                "loader": self.ctx.code(found.loader),
                "device_expr": self.ctx.code(found.device)
                if found.device is not None
                else "device",
            }
            movable = (
                found.loops
                and all(names and ", " in names for _, _, names in found.loops)
                and found.device is not None
            )
            if not movable and found.device is not None and anchor is not None:
                # any batch, consumed anywhere: the helper class moves each batch
                edits = [
                    self.ctx.replace(
                        found.call,
                        f"{HELPER}({variables['loader']}, {variables['device_expr']})",
                    )
                ]
                statements = set(found.statements)
                if not helper_written:
                    edits.append(
                        self.ctx.insert_after(anchor.body[-1], HELPER_CODE, HELPER_IMPORTS)
                    )
                    statements.add(id(anchor))
                    helper_written = True
                self.report(
                    found.call,
                    case="move",
                    edits=edits,
                    variables=variables,
                    statements=tuple(statements),
                )
                continue
            if not movable:
                self.report(
                    found.call, case="manual", variables=variables, statements=found.statements
                )
                continue
            edits = [self.ctx.replace(found.call, variables["loader"])]
            statements = set(found.statements)
            for loop, stack, names in found.loops:
                moved = ", ".join(f"{n}.to({variables['device_expr']})" for n in names.split(", "))
                edits.append(self.ctx.prepend_to_body(loop, f"{names} = {moved}"))
                statements.update(stack)
            self.report(
                found.call,
                case="move",
                edits=edits,
                variables=variables,
                statements=tuple(statements),
            )
