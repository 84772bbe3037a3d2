"""Source positions for the few nodes a run reports, from generating only the statements that
hold them.

LibCST's PositionProvider records a range for every node; we record only the wanted ones. A
code generation pass notes where each wanted node starts and ends as indexes into the
generated tokens; the lines and columns are counted once at the end, over the joined text,
instead of token by token.

Generating the whole module up to the last wanted node costs as much as a walk over every
node before it. So each wanted node is placed in a statement of a block (one that starts a
line: a simple statement line or a compound statement), and only that statement is generated,
with the indentation of the blocks around it, so that its text is the file's text from the
start of one of its lines. Which statement holds a node, LibCST cannot say without that walk;
the matcher's statement stack when it made the hit can. Python's own syntax tree of the same
text (the nesting guard parses it anyway), walked beside LibCST's statements, says on which
line each statement's code starts; the generated text is checked against the file's text
there. Whatever does not line up falls back to generating the whole module (module_spans), so
the positions never depend on the mapping being right.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from contextlib import suppress
from typing import NamedTuple

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
    """Where a wanted node's code starts (after the leading lines a statement owns), or the
    statement whose start anchors the generated text."""

    __slots__ = ("key", "start", "state")

    def __init__(self, state: _PositionState, key: int) -> None:
        self.state = state
        self.key = key

    def __enter__(self) -> None:
        self.start = len(self.state.tokens)
        if self.key == self.state.anchor:
            self.state._anchored(self.start)

    def __exit__(self, *exc: object) -> bool:
        if exc[0] is None and self.key in self.state.wanted:
            self.state._record(self.key, self.start)
        return False


class _PositionState(CodegenState):
    """Generation state that records the token ranges of the wanted nodes. With an `anchor`
    statement it also records the token where that statement's code starts, and generation
    does not stop before it."""

    def __init__(
        self,
        module: cst.Module,
        wanted: set[int],
        anchor: cst.CSTNode | None = None,
        indent: Sequence[str] = (),
    ):
        super().__init__(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        self.indent_tokens = list(indent)
        self.wanted = wanted
        # id -> (first token, token after the last)
        self.found: dict[int, tuple[int, int]] = {}
        self._starts: dict[int, int] = {}
        self.anchor = id(anchor) if anchor is not None else None
        # the token where the anchor statement's code starts (nothing to wait for without one)
        self.anchor_at: int | None = None if anchor is not None else 0

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
        self._stop_when_done()

    def _anchored(self, start: int) -> None:
        self.anchor_at = start
        self._stop_when_done()

    def _stop_when_done(self) -> None:
        if len(self.found) == len(self.wanted) and self.anchor_at is not None:
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
        if key == self.anchor or (key in self.wanted and key not in self.found):
            return _Syntactic(self, key)
        return _NOTHING

    def spans(self, first_line: int = 1) -> dict[int, Span]:
        """The found token ranges as lines and columns (1-based), counted in one pass; the
        generated text starts at the first column of line `first_line`."""
        marks = sorted({i for pair in self.found.values() for i in pair})
        where: dict[int, tuple[int, int]] = {}
        line, column, done = first_line, 0, 0
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


def module_spans(module: cst.Module, nodes: Sequence[cst.CSTNode]) -> dict[int, Span]:
    """The spans of `nodes` (by id) from generating the whole module up to the last of them.
    A node not in the module has none."""
    wanted = {id(n) for n in nodes}
    if not wanted:
        return {}
    state = _PositionState(module, wanted)
    with suppress(_AllFound):
        module._codegen(state)
    return state.spans()


def node_spans(
    module: cst.Module,
    nodes: Sequence[cst.CSTNode],
    *,
    text: str | None = None,
    tree: ast.Module | None = None,
    near: Sequence[tuple[int, ...]] = (),
) -> dict[int, Span]:
    """The spans of `nodes` (by id), the same as module_spans gives. `text` is what `module`
    was parsed from and `tree` Python's own syntax tree of it; `near[i]`, when given, holds ids
    of statements that may hold `nodes[i]` (a hit's statements: the matcher's stack when it
    made the hit, and those its fix edits). With them only the statements holding the nodes are
    generated. A node in none of them (unless it is a statement or an imported name itself), or
    anything else that does not line up, costs a generation of the whole module instead."""
    if not nodes:
        return {}
    if text is not None and tree is not None:
        spans = _statement_spans(module, nodes, text, tree, near)
        if spans is not None:
            return spans
    return module_spans(module, nodes)


# ---- placing nodes in statements --------------------------------------------------------------


class _Mismatch(Exception):
    """LibCST's statements and Python's do not line up."""


class _Place(NamedTuple):
    """A statement of a block, which starts a line."""

    statement: cst.BaseStatement
    # the line where its code starts (after the leading lines it owns), from Python's tree
    line: int
    # the indentation of the blocks around it, as code generation adds it
    indent: tuple[str, ...]


def _statement_spans(
    module: cst.Module,
    nodes: Sequence[cst.CSTNode],
    text: str,
    tree: ast.Module,
    near: Sequence[tuple[int, ...]],
) -> dict[int, Span] | None:
    """The spans from generating the statements that hold the nodes, or None when a node
    cannot be placed or a statement's text is not where Python's tree says."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        # Python's tree counts a carriage return alone as a line break; the spans do not
        return None
    needed = {key for around in near for key in around}
    try:
        pending = _placed(nodes, near, _places(module, tree, needed))
        if not all(pending.values()):
            # a node off the matcher's stacks (an import in a function): enter every statement
            pending = _placed(nodes, near, _places(module, tree, None))
    except _Mismatch:
        return None
    lines = text.split("\n")
    spans: dict[int, Span] = {}
    while pending:
        if not all(pending.values()):
            return None
        groups: dict[int, tuple[_Place, set[int]]] = {}
        for key, candidates in pending.items():
            place = candidates[0]
            groups.setdefault(id(place.statement), (place, set()))[1].add(key)
        for place, wanted in groups.values():
            found = _spans_in(module, place, wanted, lines)
            if found is None:
                return None
            spans.update(found)
        pending = {key: c[1:] for key, c in pending.items() if key not in spans}
    return spans


def _placed(
    nodes: Sequence[cst.CSTNode], near: Sequence[tuple[int, ...]], places: dict[int, _Place]
) -> dict[int, list[_Place]]:
    """id(node) -> the places that may hold it, most likely first."""
    return {
        id(node): _candidates(node, near[index] if near else (), places)
        for index, node in enumerate(nodes)
    }


def _candidates(
    node: cst.CSTNode, near: tuple[int, ...], places: dict[int, _Place]
) -> list[_Place]:
    """The places that may hold the node: its own when it is a statement or an imported name,
    else those of the statements `near` names, innermost first. `near` is mostly the walk's
    stack, but a rule may add the statements its fix edits, in any order; the statements that
    hold the node nest, so the deepest comes first."""
    own = places.get(id(node))
    if own is not None:
        return [own]
    unique = {id(p.statement): p for p in (places.get(key) for key in reversed(near)) if p}
    return sorted(unique.values(), key=lambda place: len(place.indent), reverse=True)


def _spans_in(
    module: cst.Module, place: _Place, wanted: set[int], lines: list[str]
) -> dict[int, Span] | None:
    """The spans of the wanted nodes that are in the statement of `place`, from generating
    it, or None when its text is not the file's text at the line Python's tree gives."""
    state = _PositionState(module, wanted, anchor=place.statement, indent=place.indent)
    with suppress(_AllFound):
        place.statement._codegen(state)
    if state.anchor_at is None:
        return None
    # the statement's leading lines come before the line its code starts on
    first = place.line - "".join(state.tokens[: state.anchor_at]).count("\n")
    if not _written_at(lines, first, "".join(state.tokens)):
        return None
    return state.spans(first)


def _written_at(lines: list[str], first: int, generated: str) -> bool:
    """Is `generated` the text from the start of line `first` (1-based; `lines` split at
    "\\n", as the spans count lines)?"""
    parts = generated.split("\n")
    last = first - 1 + len(parts) - 1
    if first < 1 or lines[first - 1 : last] != parts[:-1]:
        return False
    if last == len(lines):
        # the last statement of a file without a final newline is generated with one
        return parts[-1] == ""
    return last < len(lines) and lines[last].startswith(parts[-1])


# ---- LibCST's statements beside Python's ----------------------------------------------------

# the class of Python's syntax tree each LibCST statement is ("Async" before it for `async`)
_AST_NAMES: dict[type, str] = {
    cst.Assign: "Assign",
    cst.AnnAssign: "AnnAssign",
    cst.AugAssign: "AugAssign",
    cst.Expr: "Expr",
    cst.Pass: "Pass",
    cst.Break: "Break",
    cst.Continue: "Continue",
    cst.Return: "Return",
    cst.Raise: "Raise",
    cst.Assert: "Assert",
    cst.Del: "Delete",
    cst.Global: "Global",
    cst.Nonlocal: "Nonlocal",
    cst.Import: "Import",
    cst.ImportFrom: "ImportFrom",
    cst.If: "If",
    cst.For: "For",
    cst.While: "While",
    cst.Try: "Try",
    cst.TryStar: "TryStar",
    cst.With: "With",
    cst.FunctionDef: "FunctionDef",
    cst.ClassDef: "ClassDef",
    cst.Match: "Match",
}


def _places(module: cst.Module, tree: ast.Module, needed: set[int] | None) -> dict[int, _Place]:
    """id -> place, for the statements of blocks, the small statements and the imported names.
    Only the compound statements whose ids are `needed` are entered (all when None): the
    statements around a node the matcher reported are on its stack. Raises _Mismatch."""
    places: dict[int, _Place] = {}
    _block(module.body, tree.body, (), module.default_indent, needed, places)
    return places


def _block(
    statements: Sequence[cst.BaseStatement],
    nodes: list[ast.stmt],
    indent: tuple[str, ...],
    default_indent: str,
    needed: set[int] | None,
    places: dict[int, _Place],
) -> None:
    # Python has one statement for each small statement of a line (`a = 1; b = 2`)
    at = 0
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            small = nodes[at : at + len(statement.body)]
            at += len(statement.body)
            if not small:
                raise _Mismatch
            place = _Place(statement, small[0].lineno, indent)
            _small(statement.body, small, place, places)
        else:
            if at >= len(nodes):
                raise _Mismatch
            node = nodes[at]
            at += 1
            _same_kind(statement, node)
            place = _Place(statement, node.lineno, indent)
            if needed is None or id(statement) in needed:
                for suite, body, deeper in _suites(statement, node, default_indent):
                    if isinstance(suite, cst.IndentedBlock):
                        own = default_indent if suite.indent is None else suite.indent
                        inner = (*indent, *deeper, own)
                        _block(suite.body, body, inner, default_indent, needed, places)
                    else:
                        _small(suite.body, body, place, places)
        places[id(statement)] = place
    if at != len(nodes):
        raise _Mismatch


def _small(
    statements: Sequence[cst.BaseSmallStatement],
    nodes: list[ast.stmt],
    place: _Place,
    places: dict[int, _Place],
) -> None:
    if len(statements) != len(nodes):
        raise _Mismatch
    for statement, node in zip(statements, nodes):
        _same_kind(statement, node)
        places[id(statement)] = place
        if isinstance(statement, (cst.Import, cst.ImportFrom)) and not isinstance(
            statement.names, cst.ImportStar
        ):
            for alias in statement.names:
                places[id(alias)] = place


def _same_kind(statement: cst.CSTNode, node: ast.stmt) -> None:
    """Raises _Mismatch unless Python's statement is the LibCST statement's kind."""
    name = _AST_NAMES.get(type(statement))
    if name is not None and getattr(statement, "asynchronous", None) is not None:
        name = "Async" + name
    if name is None or type(node).__name__ != name:
        raise _Mismatch


def _suites(
    statement: cst.BaseCompoundStatement, node: ast.stmt, default_indent: str
) -> Iterator[tuple[cst.BaseSuite, list[ast.stmt], tuple[str, ...]]]:
    """(the suite, Python's statements of it, indentation between the statement's and the
    suite's own) for each suite of a compound statement."""
    if isinstance(statement, cst.Match):
        if len(statement.cases) != len(node.cases):
            raise _Mismatch
        # the cases are indented inside the match, their bodies inside the cases
        deeper = (default_indent if statement.indent is None else statement.indent,)
        for case, python in zip(statement.cases, node.cases):
            yield case.body, python.body, deeper
        return
    yield statement.body, node.body, ()
    if isinstance(statement, cst.If):
        yield from _elif(statement, node)
    elif isinstance(statement, (cst.For, cst.While)):
        yield from _else(statement.orelse, node.orelse)
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        if len(statement.handlers) != len(node.handlers):
            raise _Mismatch
        for handler, python in zip(statement.handlers, node.handlers):
            yield handler.body, python.body, ()
        yield from _else(statement.orelse, node.orelse)
        yield from _else(statement.finalbody, node.finalbody)


def _elif(
    statement: cst.If, node: ast.If
) -> Iterator[tuple[cst.BaseSuite, list[ast.stmt], tuple[str, ...]]]:
    orelse, python = statement.orelse, node.orelse
    while isinstance(orelse, cst.If):
        # Python's tree has an `elif` as the only statement of an `else`
        if len(python) != 1 or not isinstance(python[0], ast.If):
            raise _Mismatch
        yield orelse.body, python[0].body, ()
        orelse, python = orelse.orelse, python[0].orelse
    yield from _else(orelse, python)


def _else(
    part: cst.Else | cst.Finally | None, python: list[ast.stmt]
) -> Iterator[tuple[cst.BaseSuite, list[ast.stmt], tuple[str, ...]]]:
    if part is not None:
        yield part.body, python, ()
    elif python:
        raise _Mismatch
