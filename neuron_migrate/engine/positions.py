"""Source positions for the few nodes a run reports, from one code generation pass.

LibCST's PositionProvider records a range for every node; we record only the wanted ones and
stop generating as soon as the last of them is done.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

import libcst as cst
from libcst._nodes.internal import CodegenState

from neuron_migrate.model import Span


class _AllFound(Exception):
    pass


class _PositionState(CodegenState):
    def __init__(self, module: cst.Module, wanted: set[int]):
        super().__init__(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        self.line = 1
        self.column = 0
        self.wanted = wanted
        self.found: dict[int, Span] = {}
        self._starts: dict[int, tuple[int, int]] = {}

    def _advance(self, value: str) -> None:
        newlines = value.count("\n")
        if newlines:
            self.line += newlines
            self.column = len(value) - value.rindex("\n") - 1
        else:
            self.column += len(value)

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self._advance(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self._advance(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:
            self._starts[id(node)] = (self.line, self.column)

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.wanted and key not in self.found:
            line, column = self._starts[key]
            self._record(key, line, column)

    def _record(self, key: int, line: int, column: int) -> None:
        self.found[key] = Span(line, column + 1, self.line, self.column + 1)
        if len(self.found) == len(self.wanted):
            raise _AllFound

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        # statements own their leading blank lines and indentation; this is where the code starts
        line, column = self.line, self.column
        yield
        key = id(node)
        if key in self.wanted and key not in self.found:
            self._record(key, line, column)


def node_spans(module: cst.Module, nodes: list[cst.CSTNode]) -> dict[int, Span]:
    wanted = {id(n) for n in nodes}
    if not wanted:
        return {}
    state = _PositionState(module, wanted)
    with suppress(_AllFound):
        module._codegen(state)
    return state.found
