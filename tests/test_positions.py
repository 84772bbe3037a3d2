"""Source positions (engine/positions.py): generating only the statements that hold the wanted
nodes gives the spans that generating the whole module gives, and whatever does not line up
falls back to the whole module."""

from __future__ import annotations

import ast
import sys

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neuron_migrate.checkers.python import measure_nesting
from neuron_migrate.engine import positions
from neuron_migrate.engine.positions import module_spans, node_spans
from neuron_migrate.engine.walk import inert
from neuron_migrate.model import Span


def _programs():
    """Generated programs; hypothesmith is imported when a test draws one (building its
    grammar costs seconds, which the fast lane, collecting this module, need not pay)."""
    import hypothesmith

    return hypothesmith.from_grammar()


_STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement)


class _Code(cst.CSTVisitor):
    """Every node of code (not whitespace or punctuation) with the ids of the statements
    around it, as the matcher's statement stack holds them."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[int] = []
        self.nodes: list[cst.CSTNode] = []
        self.near: list[tuple[int, ...]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, _STATEMENTS):
            self.stack.append(id(node))
        if not inert(type(node)) and not isinstance(node, cst.Module):
            self.nodes.append(node)
            self.near.append(tuple(self.stack))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, _STATEMENTS):
            self.stack.pop()


def _code(module: cst.Module) -> _Code:
    found = _Code()
    module.visit(found)
    return found


@pytest.fixture
def whole_module_counted(monkeypatch) -> list[int]:
    """How many times node_spans fell back to generating the whole module."""
    calls: list[int] = []

    def counted(module, nodes):
        calls.append(len(nodes))
        return module_spans(module, nodes)

    monkeypatch.setattr(positions, "module_spans", counted)
    return calls


def assert_statement_spans(source: str, calls: list[int]) -> dict[str, Span]:
    """Every node of code gets the span the whole module's generation gives, without it.
    Returns the spans of the expressions by their code (the first of each code)."""
    module = cst.parse_module(source)
    code = _code(module)
    spans = node_spans(module, code.nodes, text=source, tree=ast.parse(source), near=code.near)
    assert calls == []
    assert spans == module_spans(module, code.nodes)
    assert len(spans) == len({id(n) for n in code.nodes})
    by_code: dict[str, Span] = {}
    for node in code.nodes:
        if isinstance(node, cst.BaseExpression):
            by_code.setdefault(module.code_for_node(node), spans[id(node)])
    return by_code


DECORATED = """\
import torch


@decorator(
    torch.device("cuda"),
)
# between the decorators
@other
def f(x):
    return x.cuda()

@dataclass
class K:
    '''A docstring.'''

    a: int = 1

    @property
    def b(self):
        return self.a
"""

ELIF = """\
if a:
    x = 1
elif b:
    y = torch.cuda.is_available()
elif c: z = 3
else:
    if d:
        w = 4
    elif e:
        v = 5
"""

TRY = """\
try:
    import torch_xla
except ImportError as e:
    torch_xla = None
except (A, B):
    pass
else:
    xm = torch_xla.core
finally:
    done()
for i in range(3):
    try: f(i)
    finally: g()
else:
    h()
while x:
    break
else:
    y()
"""

SEMICOLONS = """\
a = 1; b = x.cuda(); c = 3
if x: d(); e = f.cuda()
def g(): return h.cuda(); del q
"""

LEADING_LINES = """\
#!/usr/bin/env python
# a header comment

import os


# comments before a statement belong to it
x = 1
def f():
    # inside
    y = 2

# at the start of a line, inside the block
    z = 3
    \t
    return y

    # a comment the block's footer holds
w = 4
"""

NESTED = """\
class A:
    class B:
        def m(self):
            def inner():
                class C:
                    async def n(self):
                        async with a as b, c:
                            async for i in b:
                                await i.cuda()
                return C
            return inner
    with open(p) as f, open(q) as g:
        data = f.read()
"""

BRACKETS = """\
def f():
    if x:
        model = build(
            a,
            b=torch.device("cuda"),
        )
        y = [
            1,
            2, z.cuda()]
        s = '''a
long string'''; t = u.cuda()
        w = \\
            v.cuda()
"""

TABS = """\
def f():
\tif x:
\t\ty = a.cuda()
\t\tz = [
\t\t\tb.cuda(),
\t\t]
\treturn y
class K:
  def m(self):
      return c.cuda()
"""

NON_ASCII = """\
# ünïcode, 日本語
def f():
    s = "héllo ñ 日本"; y = t.cuda()
    return {"ключ": s, "k": y.cuda()}
"""

MATCH = """\
match command.split():
    case [action]:
        go(action.cuda())
    case [action, obj] if obj:
        if obj:
            take(obj)
    case _:
        pass
"""


@pytest.mark.parametrize(
    "source",
    [DECORATED, ELIF, TRY, SEMICOLONS, LEADING_LINES, NESTED, BRACKETS, TABS, NON_ASCII, MATCH],
    ids=[
        "decorated",
        "elif",
        "try",
        "semicolons",
        "leading-lines",
        "nested",
        "brackets",
        "tabs",
        "non-ascii",
        "match",
    ],
)
def test_statements_give_the_whole_module_spans(source, whole_module_counted):
    assert_statement_spans(source, whole_module_counted)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* is Python 3.11")
def test_try_star(whole_module_counted):
    assert_statement_spans(
        "try:\n    f()\nexcept* ValueError:\n    g.cuda()\n", whole_module_counted
    )


def test_columns_count_characters(whole_module_counted):
    spans = assert_statement_spans(NON_ASCII, whole_module_counted)
    assert spans["t.cuda()"] == Span(3, 27, 3, 35)
    assert spans["y.cuda()"] == Span(4, 29, 4, 37)


def test_decorated_definitions_start_at_their_decorators(whole_module_counted):
    spans = assert_statement_spans(DECORATED, whole_module_counted)
    assert spans["x.cuda()"] == Span(10, 12, 10, 20)
    assert spans["self.a"] == Span(20, 16, 20, 22)


def test_crlf_lines(whole_module_counted):
    assert_statement_spans(TRY.replace("\n", "\r\n"), whole_module_counted)


def test_a_file_without_a_final_newline(whole_module_counted):
    assert_statement_spans("x = 1\nif x:\n    y.cuda()\n    pass", whole_module_counted)


def test_a_hint_that_does_not_hold_the_node_is_passed_over(whole_module_counted):
    """A rule may add the statements its fix edits, deeper than the one holding the node."""
    source = "def f():\n    x = a.cuda()\n    if y:\n        for i in z:\n            g(i)\n"
    module = cst.parse_module(source)
    f = module.body[0]
    line, other = f.body.body[0], f.body.body[1].body.body[0]
    call = line.body[0].value
    spans = node_spans(
        module, [call], text=source, tree=ast.parse(source), near=[(id(f), id(line), id(other))]
    )
    assert whole_module_counted == []
    assert spans == {id(call): Span(2, 9, 2, 17)}


# ---- falling back to the whole module ----------------------------------------------------------


def fallback_spans(source: str, calls: list[int], **given) -> None:
    module = cst.parse_module(source)
    code = _code(module)
    spans = node_spans(module, code.nodes, **given)
    assert calls == [len(code.nodes)]
    assert spans == module_spans(module, code.nodes)


def test_without_python_s_tree(whole_module_counted):
    fallback_spans(DECORATED, whole_module_counted, text=DECORATED)


def test_python_s_tree_of_another_text(whole_module_counted):
    fallback_spans(ELIF, whole_module_counted, text=ELIF, tree=ast.parse(TRY))


def test_python_s_tree_with_other_lines(whole_module_counted):
    """The trees line up, but the statements are not where the tree says: the text check."""
    module = cst.parse_module(ELIF)
    code = _code(module)
    shifted = ast.parse("\n" + ELIF)
    spans = node_spans(module, code.nodes, text=ELIF, tree=shifted, near=code.near)
    assert whole_module_counted == [len(code.nodes)]
    assert spans == module_spans(module, code.nodes)


def test_a_carriage_return_alone(whole_module_counted):
    """Python's tree counts it as a line break, the spans do not: the second `b = 1` is on
    line 1 for them, and line 2 holds the same text."""
    source = "a\rb = 1\nb = 1\n"
    module = cst.parse_module(source)
    second = module.body[1]
    name = second.body[0].targets[0].target
    spans = node_spans(module, [name], text=source, tree=ast.parse(source), near=[(id(second),)])
    assert whole_module_counted == [1]
    assert spans == {id(name): Span(1, 3, 1, 4)}


def test_a_node_in_no_statement_named(whole_module_counted):
    source = "x = 1\ny = a.cuda()\n"
    module = cst.parse_module(source)
    call = module.body[1].body[0].value
    tree = ast.parse(source)
    spans = node_spans(module, [call], text=source, tree=tree, near=[(id(module.body[0]),)])
    assert whole_module_counted == [1]
    assert spans == {id(call): Span(2, 5, 2, 13)}
    assert node_spans(module, [call], text=source, tree=tree) == spans
    assert whole_module_counted == [1, 1]


def test_a_node_not_in_the_module(whole_module_counted):
    source = "x = 1\n"
    module = cst.parse_module(source)
    stranger = cst.Name("y")
    assert node_spans(module, [stranger], text=source, tree=ast.parse(source)) == {}
    assert whole_module_counted == [1]


def test_the_nesting_guard_keeps_python_s_tree():
    assert isinstance(measure_nesting("x = 1\n").tree, ast.Module)
    assert measure_nesting("print 'python 2'\n").tree is None


@pytest.mark.slow
# hypothesmith compiles what it generates, and Python warns about code such as `1()`
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.deferred(_programs))
def test_generated_programs(program):
    """Odd but valid code (hypothesmith): the same spans, by either way."""
    tree = measure_nesting(program).tree
    if tree is None:
        return
    try:
        module = cst.parse_module(program)
    except cst.ParserSyntaxError:
        return
    code = _code(module)
    spans = node_spans(module, code.nodes, text=program, tree=tree, near=code.near)
    assert spans == module_spans(module, code.nodes)
