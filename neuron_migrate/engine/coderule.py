"""Code rules: the part of a rule that a table cannot say, in one small module beside the rule's
TOML file (`rules/xla/NM401_device_loader.py` beside `rules/xla/NM401_device_loader.toml`).

The TOML file keeps everything a reader and `explain` need: code, name, messages, safety, `why`,
`fix`, `source` and the examples, which run as tests whatever the rule is made of. The module
adds logic in one or both of two ways:

* **Predicates.** A `[[match]]` table with `when = "single_index_argument"` is tried only when
  the function of that name in the rule's module returns true: `def single_index_argument(node,
  ctx) -> bool`. Use this when a data pattern is right but for one extra check.
* **A visitor.** One subclass of `CodeRule` with `visit_<Node>` / `leave_<Node>` methods named
  after LibCST node classes (`visit_Call`, `visit_For`, `leave_Module`, ...). The engine calls
  them during its single traversal of the file, after its own bookkeeping for the node, so
  `self.ctx` already knows the node's context. A rule reports with `self.report(node,
  case=..., edits=[...])`; `case` names the `[[match]]` table (`kind = "code"`, `case =
  "..."`) whose message and safety the finding takes. A new instance is made for every file,
  so per-file state lives on `self`.

What a rule may use is `Context` (below): qualified names through the file's imports, source
text, where an expression sits, the target device and settings, a few file facts, and edit
builders. Rules never reach into the engine's classes. Code rules ship with the tool; users'
own packs are data only (no code runs from a user's pyproject).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import libcst as cst

from neuron_migrate.engine.names import matches_name
from neuron_migrate.packs.modules import import_rule_module

if TYPE_CHECKING:
    from neuron_migrate.config.settings import Target
    from neuron_migrate.engine.scopes import Scope
    from neuron_migrate.packs.loader import Pattern, Rule

__all__ = [
    "CodeRule",
    "Context",
    "Edit",
    "is_device_string",
    "is_main_guard",
    "keyword_arg",
    "matches_name",
    "string_value",
]

_STRING_RE = re.compile(
    r"^(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|\")(?P<body>.*)(?P=quote)$", re.S
)


@dataclass(eq=False)
class Edit:
    """A named action to apply to one node when the fix is taken (see engine/edits.py)."""

    target: cst.CSTNode
    action: str
    params: dict[str, Any]
    variables: dict[str, str]
    # the rule that asked for it (to name it if the edit fails)
    rule: str = "?"

    @property
    def statement_level(self) -> bool:
        from neuron_migrate.packs.vocabulary import STATEMENT_ACTIONS

        return self.action in STATEMENT_ACTIONS or self.action == "prepend-to-body"


# ---- small helpers rules share ----------------------------------------------------------------


def string_value(node: cst.CSTNode | None) -> str | None:
    """The text of a plain (non-f, non-bytes) one-piece string literal, else None."""
    if not isinstance(node, cst.SimpleString):
        return None
    found = _STRING_RE.match(node.value)
    if found is None or "\\" in found["body"]:
        return None
    return found["body"]


def is_device_string(value: str | None, devices: Iterable[str]) -> bool:
    """ "xla", "xla:0" for devices ("xla",); not "xla:x" or "xlab"."""
    if value is None:
        return False
    base, _, index = value.partition(":")
    return base in devices and (index == "" or index.isdigit())


def is_main_guard(test: cst.BaseExpression) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = {type(test.left), type(target.comparator)}
    if sides != {cst.Name, cst.SimpleString}:
        return False
    name = test.left if isinstance(test.left, cst.Name) else target.comparator
    text = target.comparator if isinstance(test.left, cst.Name) else test.left
    return name.value == "__name__" and text.value.strip("'\"") == "__main__"


def keyword_arg(call: cst.Call, name: str) -> cst.Arg | None:
    """The argument passed as `name=` to `call`, or None."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def _literal(code: str) -> str:
    """Code given to a builder is final: protect its braces from template rendering."""
    return code.replace("{", "{{").replace("}", "}}")


# ---- the context a rule sees ------------------------------------------------------------------


class Context:
    """What a code rule may know about the file and do to it. One per file, shared by the
    file's code rules; the engine keeps it current as it walks."""

    def __init__(self, engine: Any) -> None:
        # the engine's matcher; rules use the methods below, never this attribute
        self._engine = engine

    # names and text
    @property
    def module(self) -> cst.Module:
        return self._engine.module

    def qname(self, node: cst.CSTNode) -> str | None:
        """The qualified name a Name / Attribute chain resolves to through the file's imports
        (`xm.mark_step` -> `torch_xla.core.xla_model.mark_step`), or None."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        return self._engine.resolve(node, use=False)

    def code(self, node: cst.CSTNode) -> str:
        """The node's source text as written."""
        return self._engine.code(node)

    def imports_module(self, *modules: str) -> bool:
        """Does the file import one of `modules`, or a module below one?"""
        return self._engine.imports_module(modules)

    # where the walk is
    def where(self, node: cst.CSTNode) -> tuple[str, cst.CSTNode | None]:
        """How an expression is used, and the statement that owns it: ("statement", Expr),
        ("assigned", Assign), ("with-item", With), ("decorator", Decorator) or ("value", None)."""
        return self._engine.context_of(node)

    @property
    def scope(self) -> Scope:
        """The innermost function, class or module scope of the walk."""
        return self._engine.current_scope

    @property
    def statements(self) -> tuple[int, ...]:
        """Ids of the statements that enclose the walk now (hand to `report` when a finding is
        made later, e.g. in leave_Module)."""
        return self._engine.statement_stack

    @property
    def in_main_guard(self) -> bool:
        """Is the walk inside `if __name__ == "__main__":`?"""
        return self._engine.main_guard > 0

    def compared(self, node: cst.CSTNode) -> bool:
        """Is the expression a side of a comparison (`x.dtype == torch.float64`)?"""
        return id(node) in self._engine.compared

    @property
    def called(self) -> frozenset[str]:
        """Qualified names called so far in the walk (all of them by leave_Module)."""
        return frozenset(self._engine.called)

    @property
    def strings(self) -> frozenset[str]:
        """Plain string literals seen so far (all of them by leave_Module). Collected only when
        a rule class sets `wants_strings = True`."""
        return frozenset(self._engine.strings)

    # target and settings
    @property
    def target(self) -> Target:
        """The target device (`device`, `compile_backend`, `process_group_backend`, ...)."""
        return self._engine.target

    def setting(self, name: str) -> bool:
        """A boolean setting of the run (`compile`)."""
        return bool(self._engine.settings_flags.get(name))

    def variables(self, node: cst.CSTNode, qname: str = "") -> dict[str, str]:
        """The template variables of a node: the target's placeholders ({device}, {backend},
        ...), {name} (the code as written), {qname}, and for a call {args}, {arg0}.., {kw_x}."""
        return self._engine.variables_of(node, qname)

    def helper_anchor(
        self, name: str, leaving: Sequence[str] = ()
    ) -> cst.SimpleStatementLine | None:
        """The top-level import line below which a helper definition called `name` goes (pass
        it to `insert_after`), or None when the module already defines `name` or has no
        imports. Import lines naming one of `leaving` (imports the migration removes) are
        passed over unless nothing else is left."""
        body = self.module.body
        if any(
            isinstance(s, (cst.ClassDef, cst.FunctionDef)) and s.name.value == name for s in body
        ):
            return None
        lines: list[cst.SimpleStatementLine] = []
        for statement in body:
            if isinstance(statement, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
            ):
                lines.append(statement)
            elif lines or not (
                isinstance(statement, cst.SimpleStatementLine)
                and isinstance(statement.body[0], cst.Expr)
            ):
                break  # past the imports (a docstring before them is fine)
        kept = [line for line in lines if not any(m in self.code(line) for m in leaving)]
        return (kept or lines or [None])[-1]

    # edit builders: code given here is final text (no placeholders)
    def replace(
        self,
        node: cst.CSTNode,
        code: str,
        imports: Sequence[str] = (),
        companion: tuple[str, str] | None = None,
    ) -> Edit:
        """Replace an expression (or the value of a keyword argument) by `code`. `companion`:
        (module name, source) of a plain module of the user's project that `code` imports; it is
        written once beside the fixed files when it does not exist yet."""
        params = {"template": _literal(code), "imports": [_literal(i) for i in imports]}
        if companion is not None:
            params["companion"] = list(companion)
        return Edit(node, "replace-expression", params, {})

    def replace_statement(
        self,
        statement: cst.CSTNode,
        code: str,
        imports: Sequence[str] = (),
        companion: tuple[str, str] | None = None,
    ) -> Edit:
        """Replace a small statement by the statements of `code` ("" removes it)."""
        params = {"template": _literal(code), "imports": [_literal(i) for i in imports]}
        if companion is not None:
            params["companion"] = list(companion)
        return Edit(statement, "replace-statement", params, {})

    def remove_statement(self, statement: cst.CSTNode) -> Edit:
        """Remove a small statement; an emptied block gets `pass`."""
        return Edit(statement, "remove-statement", {}, {})

    def insert_after(self, statement: cst.CSTNode, code: str, imports: Sequence[str] = ()) -> Edit:
        """Add the statements of `code` after a small statement, at its indentation."""
        params = {"template": _literal(code), "imports": [_literal(i) for i in imports]}
        return Edit(statement, "insert-after", params, {})

    def prepend_to_body(self, block: cst.CSTNode, code: str, imports: Sequence[str] = ()) -> Edit:
        """Add the statements of `code` at the top of a compound statement's body."""
        params = {"template": _literal(code), "imports": [_literal(i) for i in imports]}
        return Edit(block, "prepend-to-body", params, {})


class CodeRule:
    """Base of a rule's visitor. Subclasses define `visit_<Node>(self, node)` and
    `leave_<Node>(self, node)` for the LibCST node classes they need."""

    # set True when the rule reads `ctx.strings`
    wants_strings: bool = False

    def applies(self) -> bool:
        """Does the rule have anything to look at in this file (`self.ctx.imports_module(...)`)?
        When not, the engine calls none of its methods for the file, which keeps the traversal
        cheap for rules that look at every name."""
        return True

    def __init__(self, rule: Rule, ctx: Context, sink: Callable[..., None]) -> None:
        self.rule = rule
        self.ctx = ctx
        self._sink = sink

    def pattern(self, case: str | None = None) -> Pattern:
        """The rule's `[[match]]` table of kind "code" with this `case` (the first one when
        `case` is None)."""
        for pattern in self.rule.patterns:
            if pattern.kind == "code" and (case is None or pattern.case == case):
                return pattern
        raise LookupError(f"{self.rule.code} has no [[match]] with case = {case!r}")

    def report(
        self,
        node: cst.CSTNode,
        *,
        case: str | None = None,
        edits: Sequence[Edit] = (),
        variables: Mapping[str, str] | None = None,
        statements: tuple[int, ...] | None = None,
    ) -> None:
        """One finding at `node` with the message and safety of the `[[match]]` named `case`;
        `edits` are its fix (none: a manual finding). Message variables are the node's
        (`ctx.variables`) updated with `variables`. `statements` defaults to those around the
        walk now (pass `ctx.statements` saved earlier when reporting from leave_Module)."""
        values = self.ctx.variables(node)
        if variables:
            values.update(variables)
        for edit in edits:
            edit.rule = self.rule.code
            if not edit.variables:
                edit.variables = values
        self._sink(self.rule, self.pattern(case), node, values, tuple(edits), statements)


# ---- loading a rule's module ------------------------------------------------------------------


@dataclass(frozen=True)
class RuleModule:
    """What a rule's module provides: its visitor class (or None) and its predicates."""

    visitor: type[CodeRule] | None
    predicates: dict[str, Callable[[cst.CSTNode, Context], bool]]


_LOADED: dict[str, RuleModule] = {}


def load_rule_module(path: str) -> RuleModule:
    """A rule's module, imported once per process (packs/modules.py), as a visitor and
    predicates."""
    if path in _LOADED:
        return _LOADED[path]
    module = import_rule_module(path)
    name = module.__name__
    visitors = [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, CodeRule) and value is not CodeRule
    ]
    if len(visitors) > 1:
        raise ImportError(f"{path}: one CodeRule subclass per rule module")
    predicates = {
        key: value
        for key, value in vars(module).items()
        if callable(value)
        and not isinstance(value, type)
        and not key.startswith("_")
        and getattr(value, "__module__", None) == name
    }
    _LOADED[path] = RuleModule(visitors[0] if visitors else None, predicates)
    return _LOADED[path]
