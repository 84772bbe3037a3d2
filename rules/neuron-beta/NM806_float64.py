"""NM806 float64: a float64 dtype that is compared is a question, not a choice, so it is not
rewritten."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context


def not_compared(node: cst.CSTNode, ctx: Context) -> bool:
    """The expression is not a side of a comparison (`x.dtype == torch.float64`)."""
    return not ctx.compared(node)


def _moved_to_cpu(call: cst.Call) -> bool:
    """`x.cpu()`, `x.numpy()`, `x.to("cpu")`, `x.to(device="cpu")`."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    if func.attr.value in ("cpu", "numpy"):
        return True
    if func.attr.value != "to":
        return False
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "device":
            value = arg.value
            if isinstance(value, cst.SimpleString) and value.value.strip("'\"").startswith("cpu"):
                return True
    return False


def not_on_cpu(node: cst.CSTNode, ctx: Context) -> bool:
    """`<receiver>.double()` where the receiver was not moved to the CPU first: float64 on the
    CPU (`t.detach().cpu().double()`, `t.to("cpu").double()`) is not the device's concern."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return True
    receiver = node.func.value
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
        if _moved_to_cpu(receiver):
            return False
        receiver = receiver.func.value
    return True
