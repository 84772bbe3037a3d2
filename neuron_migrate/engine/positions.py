"""Source positions for the few nodes a run reports, from one code generation pass.

LibCST's PositionProvider records a range for every node; we record only the wanted ones and
stop generating as soon as the last of them is done. During the pass a wanted node notes where
it starts and ends as indexes into the generated tokens; the lines and columns are counted once
at the end, over the joined text, instead of token by token.
"""

from __future__ import annotations

from contextlib import suppress

import libcst as cst
from libcst._nodes.internal import CodegenState

from neuron_migrate.model import Span


class _AllFound(Exception):
    pass


class _Nothing:
    """The context of a node whose position nobody asked for."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


_NOTHING = _Nothing()


class _Syntactic:
    """Where a wanted node's code starts (after the leading lines a statement owns)."""

    __slots__ = ("key", "start", "state")

    def __init__(self, state: _PositionState, key: int) -> None:
        self.state = state
        self.key = key

    def __enter__(self) -> None:
        self.start = len(self.state.tokens)

    def __exit__(self, *exc: object) -> bool:
        if exc[0] is None:
            self.state._record(self.key, self.start)
        return False


class _PositionState(CodegenState):
    def __init__(self, module: cst.Module, wanted: set[int]):
        super().__init__(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        self.wanted = wanted
        # id -> (first token, token after the last)
        self.found: dict[int, tuple[int, int]] = {}
        self._starts: dict[int, int] = {}

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:
            self._starts[id(node)] = len(self.tokens)

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.wanted and key not in self.found:
            self._record(key, self._starts[key])

    def _record(self, key: int, start: int) -> None:
        if key in self.found:
            return
        self.found[key] = (start, len(self.tokens))
        if len(self.found) == len(self.wanted):
            raise _AllFound

    def pop_trailing_newline(self) -> None:
        # the module's last newline still counts for a position that ends there
        pass

    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ):
        # statements own their leading blank lines and indentation; this is where the code starts
        key = id(node)
        if key in self.wanted and key not in self.found:
            return _Syntactic(self, key)
        return _NOTHING

    def spans(self) -> dict[int, Span]:
        """The found token ranges as lines and columns (1-based), counted in one pass."""
        marks = sorted({i for pair in self.found.values() for i in pair})
        where: dict[int, tuple[int, int]] = {}
        line, column, done = 1, 0, 0
        for mark in marks:
            text = "".join(self.tokens[done:mark])
            newlines = text.count("\n")
            if newlines:
                line += newlines
                column = len(text) - text.rindex("\n") - 1
            else:
                column += len(text)
            where[mark] = (line, column)
            done = mark
        spans = {}
        for key, (start, end) in self.found.items():
            (line, column), (end_line, end_column) = where[start], where[end]
            spans[key] = Span(line, column + 1, end_line, end_column + 1)
        return spans


def node_spans(module: cst.Module, nodes: list[cst.CSTNode]) -> dict[int, Span]:
    wanted = {id(n) for n in nodes}
    if not wanted:
        return {}
    state = _PositionState(module, wanted)
    with suppress(_AllFound):
        module._codegen(state)
    return state.spans()
