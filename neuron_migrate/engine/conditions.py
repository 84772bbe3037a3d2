"""Named conditions a pattern can add with `when = "..."`: small checks on one node."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from neuron_migrate.engine.matcher import Matcher


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def compile_backend_differs(matcher: Matcher, node: cst.CSTNode) -> bool:
    """torch.compile with an explicit backend other than the target's, or a non-default mode."""
    if not isinstance(node, cst.Call):
        return False
    from neuron_migrate.engine.matcher import string_value

    backend = _keyword(node, "backend")
    if backend is not None and string_value(backend.value) != matcher.target.compile_backend:
        return True
    mode = _keyword(node, "mode")
    # a mode that is not a literal counts too: it may be anything at run time
    return mode is not None and string_value(mode.value) != "default"


def single_index_argument(matcher: Matcher, node: cst.CSTNode) -> bool:
    """`xla_device(1)`, `xla_device(n=1)`, `torch_xla.device(index=1)`: just a device index."""
    if not isinstance(node, cst.Call) or len(node.args) != 1:
        return False
    arg = node.args[0]
    if arg.star or isinstance(arg.value, _NOT_AN_INDEX):
        return False
    if isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False"):
        return False
    return arg.keyword is None or arg.keyword.value in ("n", "index")


# literals that cannot be a device index: a fix must not write `torch.device("neuron", "foo")`
_NOT_AN_INDEX = (
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.Float,
    cst.Imaginary,
    cst.List,
    cst.Tuple,
    cst.Set,
    cst.Dict,
    cst.Lambda,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)


def is_main_guard(test: cst.BaseExpression) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = {type(test.left), type(target.comparator)}
    if sides != {cst.Name, cst.SimpleString}:
        return False
    name = test.left if isinstance(test.left, cst.Name) else target.comparator
    text = target.comparator if isinstance(test.left, cst.Name) else test.left
    return name.value == "__name__" and text.value.strip("'\"") == "__main__"


def in_main_guard(matcher: Matcher, node: cst.CSTNode) -> bool:
    return matcher.main_guard > 0


def first_arg_xla_string(matcher: Matcher, node: cst.CSTNode) -> bool:
    from neuron_migrate.engine.matcher import is_device_string, string_value

    if not isinstance(node, cst.Call) or not node.args or node.args[0].keyword is not None:
        return False
    return is_device_string(string_value(node.args[0].value), ("xla",))


def assigned_to_first_arg(matcher: Matcher, node: cst.CSTNode) -> bool:
    """`t = xm.all_reduce(op, t)`: the call's result replaces the tensor it was given."""
    if not isinstance(node, cst.Call):
        return False
    owner = matcher._context.get(id(node), ("value", None))[1]
    if not isinstance(owner, cst.Assign) or len(owner.targets) != 1:
        return False
    target = owner.targets[0].target
    positional = [a for a in node.args if a.keyword is None]
    return (
        isinstance(target, cst.Name)
        and len(positional) >= 2
        and isinstance(positional[1].value, cst.Name)
        and positional[1].value.value == target.value
    )


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


class _Strings(cst.CSTVisitor):
    """What the beta conditions need from a whole file, gathered in one walk."""

    def __init__(self) -> None:
        super().__init__()
        self.strings: set[str] = set()
        self.compared: set[int] = set()

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        from neuron_migrate.engine.matcher import string_value

        value = string_value(node)
        if value is not None:
            self.strings.add(value)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.compared.add(id(node.left))
        self.compared.update(id(target.comparator) for target in node.comparisons)


def _file_facts(matcher: Matcher) -> _Strings:
    """The string literals and compared expressions of the file, walked once per file."""
    facts = matcher.__dict__.get("_beta_facts")
    if facts is None:
        facts = _Strings()
        matcher.module.visit(facts)
        matcher.__dict__["_beta_facts"] = facts
    return facts


def not_compared(matcher: Matcher, node: cst.CSTNode) -> bool:
    """The expression is not a side of a comparison (`x.dtype == torch.float64`)."""
    return id(node) not in _file_facts(matcher).compared


def neuron_async_load(matcher: Matcher, node: cst.CSTNode) -> bool:
    """The file targets the neuron device and leaves Transformers' async weight loading on.

    Targets: a string literal "neuron" / "neuron:N" (`torch.device("neuron")`, `.to("neuron")`,
    `device_map="neuron"`), or a legacy torch_xla / torch_neuronx import when the migration
    target is neuron. Off already: the file names `HF_DEACTIVATE_ASYNC_LOAD`.
    """
    from neuron_migrate.engine.matcher import is_device_string

    strings = _file_facts(matcher).strings
    if "HF_DEACTIVATE_ASYNC_LOAD" in strings:
        return False
    if any(is_device_string(s, ("neuron",)) for s in strings):
        return True
    return matcher.target.device == "neuron" and matcher.imports_module(
        ("torch_xla", "torch_neuronx")
    )


CHECKS: dict[str, Callable[[Matcher, cst.CSTNode], bool]] = {
    "compile-backend-differs": compile_backend_differs,
    "single-index-argument": single_index_argument,
    "in-main-guard": in_main_guard,
    "first-arg-xla-string": first_arg_xla_string,
    "assigned-to-first-arg": assigned_to_first_arg,
    "not-compared": not_compared,
    "neuron-async-load": neuron_async_load,
}

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
