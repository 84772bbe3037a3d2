"""NM102 xla-device-string: "xla" held for later use as a device.

The data pattern covers the call positions (`torch.device("xla")`, `.to("xla")`, `device=`,
`x.device.type == "xla"`). This module finds the places where the device travels before it is
used, which real scripts write more often: `device = 'xla'`, `DEVICE = "xla:0"`,
`def train(device="xla")`, `{"device": "xla"}`, `parser.add_argument("--device",
default="xla", choices=["xla", "cpu"])`, and comparisons such as `args.device == "xla"`.

A string counts only when what holds it names a device (a variable, attribute, parameter, key
or option whose name says device), so `backend = "xla"`, `strategy="xla"`, logger names and
messages stay as they are.

In a list, tuple or set of strings, a rewritten string that would repeat one already there
(`choices=["xla", "cpu"]` for the cpu target) is dropped instead: the collection is rewritten
as a whole, its comments and layout kept.
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

    def _new_text(self, string: cst.SimpleString) -> str:
        """The string for the target device, keeping the index and the quotes."""
        _, sep, index = (string_value(string) or "").partition(":")
        quote_at = len(string.prefix)
        quote = string.value[quote_at : quote_at + 1]
        return f"{string.prefix}{quote}{self.ctx.target.device}{sep}{index}{quote}"

    def _rewrite(self, string: cst.SimpleString, case: str = "held", edit=None) -> None:
        self.report(
            string,
            case=case,
            edits=[edit or self.ctx.replace(string, self._new_text(string))],
            variables={"name": self.ctx.code(string), "value": string_value(string) or ""},
        )

    def _rewrite_value(
        self, value: cst.BaseExpression, case: str = "held", owner: cst.Arg | None = None
    ) -> None:
        """Rewrite the device strings of a value (`owner`: the keyword argument it is the value
        of). In a list, tuple or set, a rewritten string equal to another element is dropped
        (`["xla", "cpu"]` -> `["cpu"]`, not `["cpu", "cpu"]`): then every finding of the
        collection carries one edit of the whole of it."""
        strings = self._strings(value)
        if not strings:
            return
        collection = self._without_duplicates(value, strings)
        if collection is not None and collection[1] and owner is None:
            collection = None  # see _end_at: the duplicate stays rather than a comment moving
        for string in strings:
            edit = None
            if collection is not None:
                edit = self.ctx.replace(owner or value, collection[0])
            self._rewrite(string, case, edit)

    def _without_duplicates(
        self, value: cst.BaseExpression, strings: list[cst.SimpleString]
    ) -> tuple[str, bool] | None:
        """The collection's code with its device strings rewritten and the rewrites that
        repeat an element dropped, and whether its own closing parenthesis changed; None when
        no rewrite repeats an element."""
        if not isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            return None
        rewritten = {id(s) for s in strings}
        seen = {
            string_value(e.value)
            for e in value.elements
            if isinstance(e, cst.Element) and id(e.value) not in rewritten
        }
        elements: list[cst.BaseElement] = []
        dropped = parenthesis = False
        for element in value.elements:
            if id(element.value) not in rewritten:
                elements.append(element)
                continue
            new = cst.SimpleString(self._new_text(element.value))
            if string_value(new) in seen:
                dropped = True
                if elements and element is value.elements[-1]:
                    changed = _end_at(value, elements, element)
                    parenthesis = isinstance(value, cst.Tuple) and changed is not value
                    value = changed
                continue
            seen.add(string_value(new))
            elements.append(element.with_changes(value=new))
        if not dropped:
            return None
        if isinstance(value, cst.Tuple) and len(elements) == 1:
            if not isinstance(elements[0].comma, cst.Comma):
                elements[0] = elements[0].with_changes(comma=cst.Comma())
        return cst.Module([]).code_for_node(value.with_changes(elements=elements)), parenthesis

    def _held(self, holder: cst.BaseExpression | None, value: cst.BaseExpression | None) -> None:
        name = _holder_name(holder) if holder is not None else None
        if value is None or name is None or not names_a_device(name):
            return
        self._rewrite_value(value)

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
            self._rewrite_value(node.value)

    # parser.add_argument("--device", default="xla", choices=["xla", "cpu"])
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
            return
        if not any(names_a_device(n) for n in _option_names(node)):
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in ("default", "choices", "const"):
                self._rewrite_value(arg.value, owner=arg)

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
                    self._rewrite_value(value, case="compared")
            left = right


def _end_at(value, elements: list[cst.BaseElement], dropped: cst.BaseElement):
    """The last element was dropped: the one before it (last of `elements`, changed in place)
    takes its comma or none; on its own line it keeps its comment, and the closer keeps its
    indentation. Gives the collection, its closer adjusted. (A replaced expression keeps its
    own parentheses, so a tuple whose closing parenthesis changed is replaced through the
    keyword argument that holds it, or not at all.)"""
    last = elements[-1]
    own = last.comma.whitespace_after if isinstance(last.comma, cst.Comma) else None
    elements[-1] = last.with_changes(comma=dropped.comma)
    if not isinstance(own, cst.ParenthesizedWhitespace):
        return value
    if isinstance(value, cst.Tuple):
        if not value.rpar:
            return value
        closer = value.rpar[-1]
    else:
        closer = value.rbracket if isinstance(value, cst.List) else value.rbrace
    before = closer.whitespace_before
    if isinstance(before, cst.ParenthesizedWhitespace):
        own = own.with_changes(indent=before.indent, last_line=before.last_line)
    else:
        own = own.with_changes(indent=False, last_line=cst.SimpleWhitespace(""))
    closer = closer.with_changes(whitespace_before=own)
    if isinstance(value, cst.Tuple):
        return value.with_changes(rpar=[*value.rpar[:-1], closer])
    if isinstance(value, cst.List):
        return value.with_changes(rbracket=closer)
    return value.with_changes(rbrace=closer)
