"""NM102 xla-device-string: "xla" held for later use as a device.

The data pattern covers the call positions (`torch.device("xla")`, `.to("xla")`, `device=`,
`x.device.type == "xla"`). This module finds the places where the device travels before it is
used, which real scripts write more often: `device = 'xla'`, `DEVICE = "xla:0"`,
`def train(device="xla")`, `{"device": "xla"}`, `parser.add_argument("--device",
default="xla", choices=["xla", "cpu"])`, and comparisons such as `args.device == "xla"`.

A string counts only when what holds it names a device (a variable, attribute, parameter, key
or option whose name says device), so `backend = "xla"`, `strategy="xla"`, logger names and
messages stay as they are.
"""

from __future__ import annotations

import re

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule, is_device_string, string_value

# device, DEVICE, train_device, device_type, devices, dev, args.dev, xla_dev (not dev_mode)
_DEVICE_WORD = re.compile(r"device|^dev$|_dev$", re.IGNORECASE)
_DEVICE_KEYS = {"device", "device_type", "accelerator_device"}


def names_a_device(name: str) -> bool:
    """Does an identifier say it holds a device (`device`, `DEVICE`, `train_dev`)?"""
    return bool(_DEVICE_WORD.search(name))


def _holder_name(node: cst.BaseExpression) -> str | None:
    """`device` for a Name, `device` for `args.device` / `self.device`, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _option_names(call: cst.Call) -> list[str]:
    """The option strings of `add_argument("--device", "-d", ...)` and its dest=."""
    names = [string_value(a.value) for a in call.args if a.keyword is None]
    dest = next((a for a in call.args if a.keyword and a.keyword.value == "dest"), None)
    if dest is not None:
        names.append(string_value(dest.value))
    return [n.lstrip("-") for n in names if n]


class DeviceStringHolders(CodeRule):
    def _strings(self, node: cst.BaseExpression) -> list[cst.SimpleString]:
        """The device strings of a value: the string itself, or the items of a list/tuple/set
        (`choices=["xla", "cpu"]`)."""
        devices = self.pattern("held").names or ("xla",)
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            items = [e.value for e in node.elements if isinstance(e, cst.Element)]
        else:
            items = [node]
        return [
            item
            for item in items
            if isinstance(item, cst.SimpleString) and is_device_string(string_value(item), devices)
        ]

    def _rewrite(self, string: cst.SimpleString, case: str = "held") -> None:
        value = string_value(string) or ""
        _, sep, index = value.partition(":")
        quote_at = len(string.prefix)
        quote = string.value[quote_at : quote_at + 1]
        new = f"{string.prefix}{quote}{self.ctx.target.device}{sep}{index}{quote}"
        self.report(
            string,
            case=case,
            edits=[self.ctx.replace(string, new)],
            variables={"name": self.ctx.code(string), "value": value},
        )

    def _held(self, holder: cst.BaseExpression | None, value: cst.BaseExpression | None) -> None:
        name = _holder_name(holder) if holder is not None else None
        if value is None or name is None or not names_a_device(name):
            return
        for string in self._strings(value):
            self._rewrite(string)

    # device = "xla"; DEVICE: str = "xla:0"; self.device = "xla"
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._held(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._held(node.target, node.value)

    # def train(device="xla"), lambda device="xla": ...
    def visit_Param(self, node: cst.Param) -> None:
        self._held(node.name, node.default)

    # {"device": "xla"}
    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = string_value(node.key)
        if key is not None and key in _DEVICE_KEYS:
            for string in self._strings(node.value):
                self._rewrite(string)

    # parser.add_argument("--device", default="xla", choices=["xla", "cpu"])
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
            return
        if not any(names_a_device(n) for n in _option_names(node)):
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in ("default", "choices", "const"):
                for string in self._strings(arg.value):
                    self._rewrite(string)

    # args.device == "xla", device != 'xla:0', device in ("xla", "cuda")
    def visit_Comparison(self, node: cst.Comparison) -> None:
        left = node.left
        for target in node.comparisons:
            right = target.comparator
            if isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
                for holder, value in ((left, right), (right, left)):
                    name = _holder_name(holder)
                    # `<x>.device.type == "xla"` is the data pattern's
                    if name is None or name == "type" or not names_a_device(name):
                        continue
                    for string in self._strings(value):
                        self._rewrite(string, case="compared")
            left = right
