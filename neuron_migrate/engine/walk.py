"""A read-only walk over a LibCST tree, in the order LibCST's own `node.visit` goes.

`node.visit(visitor)` rebuilds every node it passes (each `_visit_and_replace_children` builds
and validates a copy, even for a visitor that changes nothing) and looks up a `visit_<Node>`
method by name for every node and a `visit_<Node>_<field>` method for every field. The matcher
changes nothing, so it walks the tree itself: the children of each node class in the order
LibCST visits them (learned from LibCST, once per class per process), the callbacks of each
node class looked up once, and the whitespace and punctuation subtrees, which no callback
looks at, passed over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

# node classes whose subtrees hold only whitespace, comments and punctuation: no name, call
# or expression can be below them
_INERT_BASES: tuple[type, ...] = (
    cst.BaseParenthesizableWhitespace,
    cst.TrailingWhitespace,
    cst.EmptyLine,
    cst.Comment,
    cst.Newline,
    cst.Comma,
    cst.Dot,
    cst.Colon,
    cst.Semicolon,
    cst.AssignEqual,
    cst.ImportStar,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.BaseBinaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
    cst.BaseAugOp,
)


_INERT: dict[type, bool] = {}


def inert(node_type: type) -> bool:
    """Does a node of this class hold only whitespace and punctuation below it?"""
    found = _INERT.get(node_type)
    if found is None:
        # LibCST's base classes are ABCs: issubclass is slow enough to be worth remembering
        found = _INERT[node_type] = issubclass(node_type, _INERT_BASES)
    return found


class _FieldRecorder(cst.CSTVisitor):
    """Records the fields LibCST visits, in order, without going below them."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        pass

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if attribute not in self.fields:
            self.fields.append(attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass


# node class -> (its child fields in LibCST's visiting order, the fields LibCST did not report
# for the node it was learned from because they were None there: a later node may have them)
_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _learn(node: cst.CSTNode, known: Sequence[str] = ()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    recorder = _FieldRecorder()
    node._visit_and_replace_children(recorder)
    order = list(recorder.fields)
    # fields learned from earlier nodes of the class stay, after the field they followed
    for index, name in enumerate(known):
        if name not in order:
            before = known[index - 1] if index else None
            order.insert(order.index(before) + 1 if before in order else 0, name)
    missing = tuple(
        f
        for f in getattr(node, "__dataclass_fields__", ())
        if f not in order and getattr(node, f, None) is None
    )
    _FIELDS[type(node)] = (tuple(order), missing)
    return _FIELDS[type(node)]


def _fields(node: cst.CSTNode) -> tuple[str, ...]:
    found = _FIELDS.get(type(node))
    if found is None:
        found = _learn(node)
    order, missing = found
    for name in missing:
        value = getattr(node, name, None)
        if isinstance(value, cst.CSTNode) or (
            isinstance(value, (tuple, list)) and any(isinstance(v, cst.CSTNode) for v in value)
        ):
            order, _ = _learn(node, order)
            break
    return order


# class of a field's value -> is it a LibCST node
_NODE_CLASSES: dict[type, bool] = {}

Callback = Callable[[cst.CSTNode], object]
# what the walk does at a node of one class: (the visit callback, whose False keeps the walk
# out of the node's children, or None; a callback after it, whose answer does not count, or
# None; the leave callbacks; pass the node and everything below it by)
Handlers = tuple[Callback | None, Callback | None, tuple[Callback, ...], bool]


class TooDeep(Exception):
    """The tree nests deeper than the walk was told to go."""


def walk(
    root: cst.CSTNode, handlers: Callable[[type], Handlers], max_depth: int | None = None
) -> None:
    """Visit `root` and every node below it as LibCST's `visit` would with a CSTVisitor: the
    node's visit callbacks, its children (unless the first callback returned False), then its
    leave callbacks. `handlers(node_class)` is asked once per class. Raises TooDeep, part of
    the way through, at a node more than `max_depth` levels down."""
    table: dict[type, Handlers] = {}
    fields_of = _FIELDS
    node_class = cst.CSTNode
    node_classes = _NODE_CLASSES
    limit = max_depth if max_depth is not None else float("inf")

    def visit(node: cst.CSTNode, depth: int = 0) -> None:
        if depth > limit:
            raise TooDeep(f"deeper than {max_depth} levels")
        kind = type(node)
        entry = table.get(kind)
        if entry is None:
            entry = table[kind] = handlers(kind)
        first, then, leaves, skip = entry
        if skip:
            return
        descend = first is None or first(node) is not False
        if then is not None:
            then(node)
        if descend:
            known = fields_of.get(kind)
            for name in known[0] if known is not None and not known[1] else _fields(node):
                child = getattr(node, name)
                child_class = type(child)
                # CSTNode is an ABC: isinstance goes through its __instancecheck__ every time
                is_node = node_classes.get(child_class)
                if is_node is None:
                    is_node = node_classes[child_class] = issubclass(child_class, node_class)
                if is_node:
                    visit(child, depth + 1)
                elif child_class is tuple or child_class is list:
                    for item in child:
                        visit(item, depth + 1)
        for callback in leaves:
            callback(node)

    visit(root)
