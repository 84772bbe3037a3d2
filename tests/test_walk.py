"""The matcher's own walk (engine/walk.py) visits the nodes LibCST's `visit` visits, in the same
order, and leaves out only the whitespace and punctuation it is told to pass by."""

from __future__ import annotations

import libcst as cst
import pytest

from neuron_migrate.engine.walk import inert, walk
from tests.conftest import REPO

TRICKY = """
from a import (b as c, d)
from . import *
import x.y as z
print(f"{x!r:>{width}} {y=} {z:{w}.{p}f}", f"plain")
lambda a, /, b=1, *c, d, **e: (a, b)
async def f(x: int = 1, *, y) -> "T":
    async with a as (b, c), d:
        async for i in g():
            await h(i)
    return [i async for i in g() if i]
@dec(1)
class K(Base, metaclass=M):
    x: int = 1; y = 2
    def m(self): del self.x; global q; nonlocal_ = 1
match point:
    case {"x": 0, **rest} | [1, *others] if rest:
        pass
    case Point(x=0, y=yy) as p:
        pass
try:
    pass
except* (A, B) as e:
    raise X from e
else:
    pass
finally:
    pass
x = a if b else c; y = not -~x ** 2 // 3 @ m
s = {**d, 'k': v}; t = {i for i in r}; u = (yield); v = [*a, *b]
with open(f) as g: g.write(b"x" b"y")
assert x, "msg"
print(x[1:2, ::3], x[...])
while True: break
else: continue
"""


class _Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, int]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append(("visit", id(node)))
        return not isinstance(node, cst.ImportFrom)  # a callback may keep the walk out

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.events.append(("leave", id(original_node)))


def _walked(module: cst.Module, prune: bool) -> list[tuple[str, int]]:
    events: list[tuple[str, int]] = []

    def enter(node):
        events.append(("visit", id(node)))
        return not isinstance(node, cst.ImportFrom)

    def handlers(kind):
        return (
            enter,
            None,
            (lambda node: events.append(("leave", id(node))),),
            prune and inert(kind),
        )

    walk(module, handlers)
    return events


def _sources():
    yield pytest.param(TRICKY, id="tricky")
    for path in sorted((REPO / "examples").rglob("*.py")):
        yield pytest.param(path.read_text(encoding="utf-8"), id=path.name)


@pytest.mark.parametrize("source", list(_sources()))
def test_the_walk_goes_as_libcst_visits(source):
    module = cst.parse_module(source)
    recorder = _Recorder()
    module.visit(recorder)
    assert _walked(module, prune=False) == recorder.events


@pytest.mark.parametrize("source", list(_sources()))
def test_pruning_leaves_out_only_whitespace_and_punctuation(source):
    module = cst.parse_module(source)
    recorder = _Recorder()
    module.visit(recorder)
    kinds = {}
    for node in _all_nodes(module):
        kinds[id(node)] = type(node)
    kept = [e for e in recorder.events if not inert(kinds[e[1]])]
    assert _walked(module, prune=True) == kept


def _all_nodes(module: cst.Module) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class _All(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            found.append(node)
            return True

    module.visit(_All())
    return found


def test_a_field_none_where_the_class_was_learned_is_walked_later(monkeypatch):
    """The fields of a class are learned from its first node; one that was None there (an
    f-string's format spec) is still walked in a later node that has it."""
    from neuron_migrate.engine import walk as walk_module

    monkeypatch.setattr(walk_module, "_FIELDS", {})
    module = cst.parse_module('f"{a} {b:>{width}}"\nf"{c!r}"\n')
    recorder = _Recorder()
    module.visit(recorder)
    assert _walked(module, prune=False) == recorder.events


@pytest.mark.parametrize("path", sorted((REPO / "examples").rglob("*.py")), ids=lambda p: p.name)
def test_a_tree_too_deep_for_the_walk_gets_the_same_findings(monkeypatch, path):
    """Past WALK_DEPTH the matcher starts over with LibCST's own visit; same findings."""
    from neuron_migrate.api import enabled_rules
    from neuron_migrate.checkers.base import Job, Options
    from neuron_migrate.checkers.python import analyze
    from neuron_migrate.config.settings import Settings
    from neuron_migrate.engine import matcher

    settings = Settings(root=REPO)
    job = Job(enabled_rules(settings), settings, Options())
    ruleset = job.ruleset_for("x.py")
    text = path.read_text(encoding="utf-8")
    walked = analyze(text, "a.py", job, ruleset).findings
    monkeypatch.setattr(matcher, "WALK_DEPTH", 3)
    assert analyze(text, "a.py", job, ruleset).findings == walked
