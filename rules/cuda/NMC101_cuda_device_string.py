"""NMC101 cuda-device-string: where a GPU-era file names the CUDA device with a string, beyond
the calls the rule's `device-string` table reads.

Positions, after the way real GPU scripts are written:
- a value assigned to a device-like name: `device = "cuda"`, `DEVICE = "cuda:0"`,
  `self.device = "cuda" if torch.cuda.is_available() else "cpu"`;
- a device-like parameter's default: `def train(device="cuda")`;
- a value under a device-like key: `{"device": "cuda"}`;
- argparse: `add_argument("--device", default="cuda", choices=["cuda", "cpu"])`;
- a comparison with a device-like name: `args.device == "cuda"`;
- inside the device positions the kind reads, what it cannot: an f-string `f"cuda:{rank}"` and
  a conditional `"cuda" if ok else "cpu"` (`torch.device(...)`, `.to(...)`, `device=`);
- `device_map="cuda"` (Hugging Face) and `torch.set_default_device("cuda")`.
Any other string stays (a log message, `backend="cuda"` of some library, a dictionary key).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule

_DEVICE = "cuda"
# names that hold a device: device, dev, DEVICE, train_device, self.device, args.device_type
_DEVICE_NAME_RE = re.compile(r"(?i)^(?:\w*_)?(?:device|dev|device_type|device_name)$")
_DEVICE_KEYWORDS = {"device", "device_type"}
# Hugging Face's `from_pretrained(..., device_map="cuda")`; `torch.set_default_device("cuda")`
_OTHER_KEYWORDS = {"device_map"}
_DEFAULT_DEVICE_CALLS = {"torch.set_default_device"}
_STRING_RE = re.compile(
    r"^(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|\")(?P<body>.*)(?P=quote)$", re.S
)


def _string_body(node: cst.CSTNode) -> str | None:
    if not isinstance(node, cst.SimpleString):
        return None
    found = _STRING_RE.match(node.value)
    return None if found is None or "\\" in found["body"] else found["body"]


def _is_device(text: str | None, device: str = _DEVICE) -> bool:
    if text is None:
        return False
    base, _, index = text.partition(":")
    return base == device and (index == "" or index.isdigit())


def _fstring_head(node: cst.FormattedString, device: str) -> cst.FormattedStringText | None:
    """The leading text `cuda:` of `f"cuda:{rank}"`."""
    if not node.parts or not isinstance(node.parts[0], cst.FormattedStringText):
        return None
    head = node.parts[0]
    if head.value == f"{device}:" and len(node.parts) > 1:
        return head
    return None


def _strings_in(value: cst.BaseExpression, device: str = _DEVICE) -> Iterator[cst.CSTNode]:
    """The device strings a value is made of: the string itself, the branches of a conditional,
    the leading text of an f-string."""
    if isinstance(value, cst.SimpleString):
        if _is_device(_string_body(value), device):
            yield value
    elif isinstance(value, cst.FormattedString):
        if _fstring_head(value, device) is not None:
            yield value
    elif isinstance(value, cst.IfExp):
        yield from _strings_in(value.body, device)
        yield from _strings_in(value.orelse, device)
    elif isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
        # os.environ.get("DEVICE") or "cuda"
        yield from _strings_in(value.right, device)


def _device_like(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return _DEVICE_NAME_RE.match(target.value) is not None
    if isinstance(target, cst.Attribute):
        return _DEVICE_NAME_RE.match(target.attr.value) is not None
    if isinstance(target, cst.Subscript) and len(target.slice) == 1:
        index = target.slice[0].slice
        key = _string_body(index.value) if isinstance(index, cst.Index) else None
        return key is not None and _DEVICE_NAME_RE.match(key) is not None
    return False


def _in_assignment(node: cst.Assign | cst.AnnAssign, device: str = _DEVICE):
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
    if node.value is not None and any(_device_like(t) for t in targets):
        yield from _strings_in(node.value, device)


def _in_parameter(node: cst.Param, device: str = _DEVICE):
    if node.default is not None and _DEVICE_NAME_RE.match(node.name.value):
        yield from _strings_in(node.default, device)


def _in_dict(node: cst.Dict, device: str = _DEVICE):
    for element in node.elements:
        key = _string_body(getattr(element, "key", None))
        if key is not None and _DEVICE_NAME_RE.match(key):
            yield from _strings_in(element.value, device)


def _in_comparison(node: cst.Comparison, device: str = _DEVICE):
    left = node.left
    for target in node.comparisons:
        right = target.comparator
        if isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
            for side, other in ((left, right), (right, left)):
                if _device_like(other):
                    yield from _strings_in(side, device)
                    if isinstance(side, (cst.Tuple, cst.List, cst.Set)):
                        for element in side.elements:
                            yield from _strings_in(element.value, device)
        left = right


def _argparse_option(call: cst.Call) -> bool:
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "add_argument":
        return False
    for arg in call.args:
        if arg.keyword is None:
            name = _string_body(arg.value)
            if name is not None and _DEVICE_NAME_RE.match(name.lstrip("-").replace("-", "_")):
                return True
        elif arg.keyword.value == "dest":
            name = _string_body(arg.value)
            if name is not None and _DEVICE_NAME_RE.match(name):
                return True
    return False


def _in_call(call: cst.Call, qname: str | None, device: str = _DEVICE):
    """argparse options, and what the device-string kind leaves in the positions it reads:
    f-strings and conditionals (plain strings are the kind's)."""
    if _argparse_option(call):
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "default":
                yield from _strings_in(arg.value, device)
            elif arg.keyword is not None and arg.keyword.value == "choices":
                if isinstance(arg.value, (cst.List, cst.Tuple, cst.Set)):
                    for element in arg.value.elements:
                        yield from _strings_in(element.value, device)
        return
    values = []
    positional = [a for a in call.args if a.keyword is None and not a.star]
    is_to = isinstance(call.func, cst.Attribute) and call.func.attr.value == "to"
    if positional and (qname == "torch.device" or is_to):
        values.append(positional[0].value)
    values += [a.value for a in call.args if a.keyword and a.keyword.value in _DEVICE_KEYWORDS]
    for value in values:
        if not isinstance(value, cst.SimpleString):
            yield from _strings_in(value, device)
    # positions the kind does not read at all: plain strings too
    others = [a.value for a in call.args if a.keyword and a.keyword.value in _OTHER_KEYWORDS]
    if positional and qname in _DEFAULT_DEVICE_CALLS:
        others.append(positional[0].value)
    for value in others:
        yield from _strings_in(value, device)


def _new_code(node: cst.CSTNode, new_device: str, device: str = _DEVICE) -> str:
    """The same string naming `new_device`: quotes, prefix and index kept."""
    if isinstance(node, cst.FormattedString):
        head = node.parts[0]
        parts = [head.with_changes(value=f"{new_device}:"), *node.parts[1:]]
        return cst.Module(body=[]).code_for_node(node.with_changes(parts=parts))
    found = _STRING_RE.match(node.value)
    _, sep, index = found["body"].partition(":")
    quote = found["quote"]
    return f"{found['prefix']}{quote}{new_device}{sep}{index}{quote}"


class WiderReach(CodeRule):
    """Reports each site with case "assigned" (safe) or, for a comparison, "compared" (unsafe:
    a value read at run time, `args.device == "cuda"`, may still say cuda)."""

    def _report(self, sites, case: str) -> None:
        device = self.ctx.target.device
        for site in sites:
            edit = self.ctx.replace(site, _new_code(site, device))
            name = self.ctx.code(site)
            if isinstance(site, cst.FormattedString):
                name = (
                    f'the f-string starting "{_DEVICE}:"'  # its {fields} would read as placeholders
                )
            self.report(site, case=case, edits=[edit], variables={"name": name})

    def visit_Assign(self, node: cst.Assign) -> None:
        self._report(_in_assignment(node), "assigned")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._report(_in_assignment(node), "assigned")

    def visit_Param(self, node: cst.Param) -> None:
        self._report(_in_parameter(node), "assigned")

    def visit_Dict(self, node: cst.Dict) -> None:
        self._report(_in_dict(node), "assigned")

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._report(_in_comparison(node), "compared")

    def visit_Call(self, node: cst.Call) -> None:
        self._report(_in_call(node, self.ctx.qname(node.func)), "assigned")
