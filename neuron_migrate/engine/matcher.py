"""One traversal of one parsed file that matches every enabled rule.

Names are resolved through the file's own imports (scopes.py), never by spelling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from neuron_migrate.actions.catalog import STATEMENT_ACTIONS
from neuron_migrate.engine import conditions
from neuron_migrate.engine.ruleset import Entry, RuleSet, matches_name
from neuron_migrate.engine.scopes import Binding, ImportTable, Scope
from neuron_migrate.packs import Pattern, Rule
from neuron_migrate.settings import Target

DEVICE_KEYWORDS = {"device", "device_type"}
_STRING_RE = re.compile(
    r"^(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|\")(?P<body>.*)(?P=quote)$", re.S
)


@dataclass(eq=False)
class Edit:
    """A named action to apply to one node when the fix is taken."""

    target: cst.CSTNode
    action: str
    params: dict[str, Any]
    variables: dict[str, str]

    @property
    def statement_level(self) -> bool:
        return self.action in STATEMENT_ACTIONS


@dataclass(eq=False)
class Hit:
    rule: Rule
    pattern: Pattern
    node: cst.CSTNode
    variables: dict[str, str]
    edit: Edit | None
    # ids of the statements around the node: the fixer visits only these
    statements: tuple[int, ...] = ()

    @property
    def message(self) -> str:
        template = self.pattern.message or self.rule.message
        return template.format_map(_Missing(self.variables))


class _Missing(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def string_value(node: cst.CSTNode) -> str | None:
    """The text of a plain (non-f, non-bytes) one-piece string literal."""
    if not isinstance(node, cst.SimpleString):
        return None
    found = _STRING_RE.match(node.value)
    if found is None or "\\" in found["body"]:
        return None
    return found["body"]


def is_device_string(value: str | None, devices: tuple[str, ...]) -> bool:
    if value is None:
        return False
    base, _, index = value.partition(":")
    return base in devices and (index == "" or index.isdigit())


@dataclass
class _Placement:
    statement: cst.BaseSmallStatement
    target: str
    statements: tuple[int, ...]


@dataclass
class Matcher(cst.CSTVisitor):
    module: cst.Module
    table: ImportTable
    rules: RuleSet
    target: Target
    settings_flags: dict[str, bool]
    hits: list[Hit] = field(default_factory=list)
    # every qualified name called in the file (conditions read it)
    called: set[str] = field(default_factory=set)
    # names of torch.compile's first arguments (a module already compiled)
    compiled: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        super().__init__()
        self._scopes: list[Scope] = [self.table.module]
        self._statements: list[int] = []
        self._bound = self.table.bound_names
        self._resolved: dict[int, tuple[str, Binding] | None] = {}
        self._consumed: set[int] = set()
        self._skip_names: set[int] = set()
        # id(expression) -> (context, owning statement node)
        self._context: dict[int, tuple[str, cst.CSTNode]] = {}
        self._placements: list[_Placement] = []
        self._with_index: dict[int, int] = {}

    # ---- names -------------------------------------------------------------------------------

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """The qualified name of a Name / Attribute chain bound by an import, or None."""
        key = id(node)
        if key in self._resolved:
            found = self._resolved[key]
            return found[0] if found else None
        parts = []
        head = node
        while isinstance(head, cst.Attribute):
            parts.append(head.attr.value)
            head = head.value
        result = None
        if isinstance(head, cst.Name) and head.value in self._bound:
            binding = self._scopes[-1].lookup(head.value)
            if binding is not None:
                binding.uses += 1
                result = (".".join([binding.qname, *reversed(parts)]), binding)
        self._resolved[key] = result
        return result[0] if result else None

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    # ---- scopes and statements ----------------------------------------------------------------

    def _push_scope(self, node: cst.CSTNode) -> None:
        self._scopes.append(self.table.scopes[id(node)])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._statements.append(id(node))
        self._skip_names.add(id(node.name))
        self._push_scope(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.pop()
        self._statements.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._statements.append(id(node))
        self._skip_names.add(id(node.name))
        self._push_scope(node)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.pop()
        self._statements.pop()

    def _enter(self, node: cst.CSTNode) -> None:
        self._statements.append(id(node))

    def _exit(self, node: cst.CSTNode) -> None:
        self._statements.pop()

    visit_SimpleStatementLine = _enter
    leave_SimpleStatementLine = _exit
    visit_If = visit_For = visit_While = visit_Try = visit_TryStar = visit_Match = _enter
    leave_If = leave_For = leave_While = leave_Try = leave_TryStar = leave_Match = _exit

    def visit_With(self, node: cst.With) -> None:
        self._statements.append(id(node))
        for index, item in enumerate(node.items):
            self._context[id(item.item)] = ("with-item", node)
            self._with_index[id(item.item)] = index

    leave_With = _exit

    def visit_Expr(self, node: cst.Expr) -> None:
        self._context[id(node.value)] = ("statement", node)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self._context[id(node.decorator)] = ("decorator", node)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self._skip_names.add(id(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._skip_names.add(id(node.target))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip_names.add(id(node.keyword))

    def visit_Import(self, node: cst.Import) -> bool:
        self._match_import(node, [a.name for a in node.names])
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.module is not None and not node.relative:
            self._match_import(node, [node.module])
        return False

    # ---- hits -----------------------------------------------------------------------------------

    def _variables(self, node: cst.CSTNode, qname: str = "") -> dict[str, str]:
        variables = dict(self.target.placeholders())
        variables["qname"] = qname
        if isinstance(node, cst.Call):
            variables["name"] = self.code(node.func)
            variables["args"] = ", ".join(
                self.code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in node.args
            )
            if node.args:
                variables["arg0"] = self.code(node.args[0].value)
        else:
            variables["name"] = self.code(node)
        return variables

    def _hit(
        self,
        entry: Entry,
        node: cst.CSTNode,
        variables: dict[str, str],
        owner: cst.CSTNode | None,
    ) -> None:
        pattern = entry.pattern
        edit = None
        if pattern.action is not None:
            target = owner if pattern.action in STATEMENT_ACTIONS else node
            if target is not None:
                edit = Edit(target, pattern.action, pattern.params, variables)
        self.hits.append(Hit(entry.rule, pattern, node, variables, edit, tuple(self._statements)))

    def _passes(self, pattern: Pattern, node: cst.CSTNode, context: str) -> bool:
        if pattern.where != "any":
            if pattern.where == "value":
                if context != "value":
                    return False
            elif pattern.where != context:
                return False
        if isinstance(node, cst.Call):
            if pattern.args == "none" and node.args:
                return False
            if pattern.args == "some" and not node.args:
                return False
        if pattern.needs_setting is not None and not self.settings_flags.get(pattern.needs_setting):
            return False
        return pattern.when is None or conditions.CHECKS[pattern.when](self, node)

    def _best(self, entries: list[Entry], node: cst.CSTNode, context: str) -> list[Entry]:
        """Per rule, its first passing pattern; of those, only the most specific names."""
        chosen: dict[str, Entry] = {}
        for entry in entries:
            if entry.rule.code in chosen:
                continue
            if self._passes(entry.pattern, node, context):
                chosen[entry.rule.code] = entry
        if not chosen:
            return []
        longest = max(len(e.name) for e in chosen.values())
        return [e for e in chosen.values() if len(e.name) == longest]

    # ---- calls, references, strings ----------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        context, owner = self._context.get(id(node), ("value", None))
        qname = (
            self.resolve(node.func) if isinstance(node.func, (cst.Name, cst.Attribute)) else None
        )
        if qname is not None:
            self.called.add(qname)
            entries = self.rules.call_entries(qname)
            if entries:
                best = self._best(entries, node, context)
                if best:
                    self._consumed.add(id(node.func))
                    variables = self._variables(node, qname)
                    if context == "with-item":
                        variables["item"] = str(self._with_index[id(node)])
                    for entry in best:
                        self._hit(entry, node, variables, owner)
            if qname == "torch.compile" and node.args and isinstance(node.args[0].value, cst.Name):
                self.compiled.add(node.args[0].value.value)
        if self.rules.device_strings:
            self._device_strings_in_call(node, qname)

    def _device_strings_in_call(self, node: cst.Call, qname: str | None) -> None:
        candidates = []
        positional = [a for a in node.args if a.keyword is None and a.star == ""]
        is_to = isinstance(node.func, cst.Attribute) and node.func.attr.value == "to"
        if positional and (qname == "torch.device" or is_to):
            candidates.append(positional[0].value)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in DEVICE_KEYWORDS:
                candidates.append(arg.value)
        for candidate in candidates:
            self._device_string(candidate)

    def _device_string(self, node: cst.CSTNode) -> None:
        value = string_value(node)
        for entry in self.rules.device_strings:
            if is_device_string(value, entry.pattern.names or ("xla",)):
                variables = dict(self.target.placeholders())
                variables.update(name=self.code(node), value=value or "", qname="")
                self._hit(entry, node, variables, None)
                return

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if not self.rules.device_strings:
            return
        left = node.left
        for target in node.comparisons:
            if isinstance(target.operator, (cst.Equal, cst.NotEqual)):
                right = target.comparator
                for side, other in ((left, right), (right, left)):
                    if isinstance(other, cst.Attribute) and other.attr.value == "type":
                        self._device_string(side)
            left = target.comparator

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if id(node) in self._consumed:
            return False
        qname = self.resolve(node)
        if qname is None:
            # not an imported chain; look inside (`f(x).attr`) but not at the attribute name
            self._skip_names.add(id(node.attr))
            return True
        self._reference(node, qname)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if (
            node.value not in self._bound
            or id(node) in self._skip_names
            or id(node) in self._consumed
        ):
            return
        qname = self.resolve(node)
        if qname is not None:
            self._reference(node, qname)

    def _reference(self, node: cst.CSTNode, qname: str) -> None:
        entries = self.rules.reference_entries(qname)
        if not entries:
            return
        context, owner = self._context.get(id(node), ("value", None))
        best = self._best(entries, node, context)
        if best:
            variables = self._variables(node, qname)
            for entry in best:
                self._hit(entry, node, variables, owner)

    def _match_import(
        self, node: cst.Import | cst.ImportFrom, modules: list[cst.BaseExpression]
    ) -> None:
        if not self.rules.imports:
            return
        from neuron_migrate.engine.scopes import dotted_name

        for module in modules:
            qname = dotted_name(module)
            if qname is None:
                continue
            for entry in self.rules.imports:
                if matches_name(qname, entry.pattern.names) and self._passes(
                    entry.pattern, node, "statement"
                ):
                    variables = dict(self.target.placeholders())
                    variables.update(name=qname, qname=qname)
                    self._hit(entry, node, variables, node)
                    return

    # ---- module placement (`model.to(device)`) -------------------------------------------------

    def leave_Expr(self, node: cst.Expr) -> None:
        if self.rules.placements:
            target = conditions.placed_module(node)
            if target is not None:
                self._placements.append(_Placement(node, target, tuple(self._statements)))

    def leave_Assign(self, node: cst.Assign) -> None:
        if self.rules.placements:
            target = conditions.placed_module(node)
            if target is not None:
                self._placements.append(_Placement(node, target, tuple(self._statements)))

    # ---- whole-file checks ----------------------------------------------------------------------

    def leave_Module(self, node: cst.Module) -> None:
        for entry in self.rules.placements:
            if not any(matches_name(q, entry.pattern.names) for q in self.called):
                continue
            for placement in self._placements:
                if placement.target in self.compiled:
                    continue
                if not self._passes(entry.pattern, placement.statement, "statement"):
                    continue
                variables = dict(self.target.placeholders())
                variables.update(name=placement.target, target=placement.target, qname="")
                saved, self._statements = self._statements, list(placement.statements)
                self._hit(entry, placement.statement, variables, placement.statement)
                self._statements = saved
        for entry in self.rules.unused_imports:
            for binding in self.table.bindings:
                if binding.uses == 0 and matches_name(binding.qname, entry.pattern.names):
                    variables = dict(self.target.placeholders())
                    variables.update(name=binding.name, qname=binding.qname)
                    edit = None
                    if entry.pattern.action is not None:
                        params = {**entry.pattern.params, "names": [binding.name]}
                        edit = Edit(binding.statement, entry.pattern.action, params, variables)
                    self.hits.append(
                        Hit(entry.rule, entry.pattern, binding.alias, variables, edit, ())
                    )
