"""Where a GPU-era file names the CUDA device with a string, beyond the calls the data rule's
`device-string` kind reads (NMC101's logic; the rule's code module registers it).

Positions, after the way real GPU scripts are written:
- a value assigned to a device-like name: `device = "cuda"`, `DEVICE = "cuda:0"`,
  `self.device = "cuda" if torch.cuda.is_available() else "cpu"`;
- a device-like parameter's default: `def train(device="cuda")`;
- a value under a device-like key: `{"device": "cuda"}`;
- argparse: `add_argument("--device", default="cuda", choices=["cuda", "cpu"])`;
- a comparison with a device-like name: `args.device == "cuda"`;
- inside the device positions the kind reads, what it cannot: an f-string `f"cuda:{rank}"` and
  a conditional `"cuda" if ok else "cpu"` (`torch.device(...)`, `.to(...)`, `device=`).
Any other string stays (a log message, `backend="cuda"` of some library, a dictionary key).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

DEVICE = "cuda"
# names that hold a device: device, dev, DEVICE, train_device, self.device, args.device_type
DEVICE_NAME_RE = re.compile(r"(?i)^(?:\w*_)?(?:device|dev|device_type|device_name)$")
DEVICE_KEYWORDS = {"device", "device_type"}
_STRING_RE = re.compile(
    r"^(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|\")(?P<body>.*)(?P=quote)$", re.S
)


def string_body(node: cst.CSTNode) -> str | None:
    if not isinstance(node, cst.SimpleString):
        return None
    found = _STRING_RE.match(node.value)
    return None if found is None or "\\" in found["body"] else found["body"]


def is_device(text: str | None, device: str = DEVICE) -> bool:
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


def strings_in(value: cst.BaseExpression, device: str = DEVICE) -> Iterator[cst.CSTNode]:
    """The device strings a value is made of: the string itself, the branches of a conditional,
    the leading text of an f-string."""
    if isinstance(value, cst.SimpleString):
        if is_device(string_body(value), device):
            yield value
    elif isinstance(value, cst.FormattedString):
        head = _fstring_head(value, device)
        if head is not None:
            yield head
    elif isinstance(value, cst.IfExp):
        yield from strings_in(value.body, device)
        yield from strings_in(value.orelse, device)
    elif isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
        # os.environ.get("DEVICE") or "cuda"
        yield from strings_in(value.right, device)


def device_like(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return DEVICE_NAME_RE.match(target.value) is not None
    if isinstance(target, cst.Attribute):
        return DEVICE_NAME_RE.match(target.attr.value) is not None
    if isinstance(target, cst.Subscript) and len(target.slice) == 1:
        index = target.slice[0].slice
        key = string_body(index.value) if isinstance(index, cst.Index) else None
        return key is not None and DEVICE_NAME_RE.match(key) is not None
    return False


def in_assignment(node: cst.Assign | cst.AnnAssign, device: str = DEVICE):
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
    if node.value is not None and any(device_like(t) for t in targets):
        yield from strings_in(node.value, device)


def in_parameter(node: cst.Param, device: str = DEVICE):
    if node.default is not None and DEVICE_NAME_RE.match(node.name.value):
        yield from strings_in(node.default, device)


def in_dict(node: cst.Dict, device: str = DEVICE):
    for element in node.elements:
        key = string_body(getattr(element, "key", None))
        if key is not None and DEVICE_NAME_RE.match(key):
            yield from strings_in(element.value, device)


def in_comparison(node: cst.Comparison, device: str = DEVICE):
    left = node.left
    for target in node.comparisons:
        right = target.comparator
        if isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
            for side, other in ((left, right), (right, left)):
                if device_like(other):
                    yield from strings_in(side, device)
                    if isinstance(side, (cst.Tuple, cst.List, cst.Set)):
                        for element in side.elements:
                            yield from strings_in(element.value, device)
        left = right


def _argparse_option(call: cst.Call) -> bool:
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "add_argument":
        return False
    for arg in call.args:
        if arg.keyword is None:
            name = string_body(arg.value)
            if name is not None and DEVICE_NAME_RE.match(name.lstrip("-").replace("-", "_")):
                return True
        elif arg.keyword.value == "dest":
            name = string_body(arg.value)
            if name is not None and DEVICE_NAME_RE.match(name):
                return True
    return False


def in_call(call: cst.Call, qname: str | None, device: str = DEVICE):
    """argparse options, and what the device-string kind leaves in the positions it reads:
    f-strings and conditionals (plain strings are the kind's)."""
    if _argparse_option(call):
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "default":
                yield from strings_in(arg.value, device)
            elif arg.keyword is not None and arg.keyword.value == "choices":
                if isinstance(arg.value, (cst.List, cst.Tuple, cst.Set)):
                    for element in arg.value.elements:
                        yield from strings_in(element.value, device)
        return
    values = []
    positional = [a for a in call.args if a.keyword is None and not a.star]
    is_to = isinstance(call.func, cst.Attribute) and call.func.attr.value == "to"
    if positional and (qname == "torch.device" or is_to):
        values.append(positional[0].value)
    values += [a.value for a in call.args if a.keyword and a.keyword.value in DEVICE_KEYWORDS]
    for value in values:
        if not isinstance(value, cst.SimpleString):
            yield from strings_in(value, device)


def replaced(node: cst.CSTNode, new_device: str) -> cst.CSTNode:
    """The same string naming `new_device`: quotes, prefix and index kept."""
    if isinstance(node, cst.FormattedStringText):
        return node.with_changes(value=f"{new_device}:")
    assert isinstance(node, cst.SimpleString)
    found = _STRING_RE.match(node.value)
    _, sep, index = found["body"].partition(":")
    quote = found["quote"]
    return node.with_changes(value=f"{found['prefix']}{quote}{new_device}{sep}{index}{quote}")
