"""One traversal of one parsed file that matches every enabled rule.

Names are resolved through the file's own imports (scopes.py), never by spelling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import libcst as cst

from neuron_migrate.config.settings import Target
from neuron_migrate.engine.coderule import (
    CodeRule,
    Context,
    Edit,
    is_device_string,
    is_main_guard,
    string_value,
)
from neuron_migrate.engine.errors import RuleError
from neuron_migrate.engine.names import name_match
from neuron_migrate.engine.ruleset import Entry, RuleSet
from neuron_migrate.engine.scopes import (
    Binding,
    ImportTable,
    LoadedNames,
    Scope,
    annotation_strings,
    dotted_name,
    name_chains,
)
from neuron_migrate.engine.walk import Handlers, TooDeep, inert, walk
from neuron_migrate.packs.loader import Pattern, Rule
from neuron_migrate.packs.vocabulary import STATEMENT_ACTIONS

__all__ = ["Edit", "Hit", "Matcher", "TooDeep", "is_device_string", "string_value"]

DEVICE_KEYWORDS = {"device", "device_type"}
# deepest tree the matcher walks itself (Matcher.run); ordinary code nests a few dozen levels,
# and at a hundred LibCST's own visit is still far from Python's recursion limit
WALK_DEPTH = 100
# longest call a message quotes whole; longer ones are shown as `name(...)`
CALL_IN_MESSAGE_MAX = 60
ENV_CALLS = {"os.environ.setdefault", "os.putenv", "os.environ.update", "os.environ.__setitem__"}


@dataclass(eq=False)
class Hit:
    rule: Rule
    pattern: Pattern
    node: cst.CSTNode
    variables: dict[str, str]
    edit: Edit | None
    # ids of the statements around the node and the edited nodes: the fixer visits only these,
    # and positions.node_spans generates the innermost that holds the node
    statements: tuple[int, ...] = ()
    # a fix that edits more than one node (a device loader and the loop that consumes it)
    extra_edits: tuple[Edit, ...] = ()

    @property
    def message(self) -> str:
        template = self.pattern.message or self.rule.message
        return template.format_map(_Missing(message_values(self.variables)))

    @property
    def edits(self) -> tuple[Edit, ...]:
        return ((self.edit,) if self.edit else ()) + self.extra_edits


def message_values(variables: dict[str, str]) -> dict[str, str]:
    """A hit's variables plus what messages derive from them: {call} (the code as written when
    the hit is not a call) and {resolves_to} (" (`qname`)", or nothing when the code already
    spells the qualified name, so that a message never says `torch_xla` (torch_xla))."""
    values = dict(variables)
    name, qname = values.get("name", ""), values.get("qname", "")
    values.setdefault("call", name)
    values.setdefault("resolves_to", f" (`{qname}`)" if qname and qname != name else "")
    return values


class _Missing(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


# a code rule's class -> its callbacks (visit or leave, the node class, the method's name)
_CALLBACKS: dict[type, tuple[tuple[bool, type, str], ...]] = {}


def _callbacks(rule_class: type) -> tuple[tuple[bool, type, str], ...]:
    """The `visit_<Node>` / `leave_<Node>` methods of a code rule's class, found once per
    process (`dir` of a class costs more than matching a small file)."""
    found = _CALLBACKS.get(rule_class)
    if found is None:
        callbacks = []
        for attr in dir(rule_class):
            prefix, _, node_name = attr.partition("_")
            if prefix not in ("visit", "leave") or not node_name:
                continue
            node_type = getattr(cst, node_name, None)
            if not isinstance(node_type, type):
                raise AttributeError(f"no LibCST node {node_name}")
            callbacks.append((prefix == "visit", node_type, attr))
        found = _CALLBACKS[rule_class] = tuple(callbacks)
    return found


@dataclass
class Matcher(cst.CSTVisitor):
    module: cst.Module
    table: ImportTable
    rules: RuleSet
    target: Target
    settings_flags: dict[str, bool]
    hits: list[Hit] = field(default_factory=list)
    # every qualified name called in the file so far (code rules read it)
    called: set[str] = field(default_factory=set)
    # ids of the expressions that are a side of a comparison
    compared: set[int] = field(default_factory=set)
    # plain string literals of the file (collected only when a code rule wants them)
    strings: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        super().__init__()
        self._scopes: list[Scope] = [self.table.module]
        self._statements: list[int] = []
        self._bound = self.table.bound_names | self._star_names()
        self._resolved: dict[int, tuple[str, Binding | None] | None] = {}
        self._used: set[int] = set()  # nodes whose resolution counted as a use
        self._consumed: set[int] = set()
        self._skip_names: set[int] = set()
        # id(expression) -> (context, owning statement node)
        self._context: dict[int, tuple[str, cst.CSTNode]] = {}
        self._with_index: dict[int, int] = {}
        self._predicate_variables: dict[tuple[int, int], dict[str, str]] = {}
        self._imports: list[tuple[cst.Import | cst.ImportFrom, str, cst.CSTNode]] = []
        self._reported_calls: list[tuple[cst.Call, set[str]]] = []
        self._call_funcs: set[int] = set()
        self.main_guard = 0
        self.imported = {b.qname for b in self.table.bindings} | set(self.table.star_modules)
        self.ctx = Context(self)
        self._code_visits: dict[type, list] = {}
        self._code_leaves: dict[type, list] = {}
        self._wants_strings = False
        # names read by string annotations (forward references): their imports are in use
        self._annotation_reads: set[str] = set()
        self._loaded: set[str] | None = None  # LoadedNames of the module, when asked
        for rule, visitor in self.rules.visitors:
            self._register(visitor(rule, self.ctx, self._code_hit))

    # ---- code rules ------------------------------------------------------------------------------

    def _register(self, instance: CodeRule) -> None:
        if not instance.applies():
            return
        self._wants_strings |= instance.wants_strings
        try:
            callbacks = _callbacks(type(instance))
        except AttributeError as exc:
            raise RuleError(instance.rule.code, exc) from None
        for visit, node_type, attr in callbacks:
            table = self._code_visits if visit else self._code_leaves
            table.setdefault(node_type, []).append((instance.rule.code, getattr(instance, attr)))

    def on_visit(self, node: cst.CSTNode) -> bool:
        descend = super().on_visit(node)
        handlers = self._code_visits.get(type(node))
        if handlers:
            self._dispatch(handlers, node)
        return descend

    def on_leave(self, original_node: cst.CSTNode) -> None:
        handlers = self._code_leaves.get(type(original_node))
        if handlers:
            self._dispatch(handlers, original_node)
        super().on_leave(original_node)

    def run(self) -> None:
        """Walk the module once (engine/walk.py: what `module.visit(self)` does, without
        rebuilding every node, and past the whitespace and punctuation nobody looks at).

        Raises TooDeep, with the walk half done, for a tree nested deeper than WALK_DEPTH:
        LibCST's own `visit` takes three or four Python frames a level, ours one, so on such a
        tree LibCST might give up (RecursionError: "too deeply nested for LibCST") where this
        walk would not. The caller then matches the file with a fresh Matcher through
        `module.visit`, and the file gets what it always got."""
        handled = {*self._code_visits, *self._code_leaves, *self._own_methods()}
        self._prune = not any(inert(kind) for kind in handled)
        walk(self.module, self._handlers, WALK_DEPTH)

    @classmethod
    def _own_methods(cls) -> dict[type, tuple[str | None, str | None]]:
        """node class -> the names of the matcher's own `visit_<Node>` and `leave_<Node>`
        (not LibCST's empty ones), worked out once per process."""
        found = cls.__dict__.get("_own_table")
        if found is None:
            found = {}
            for name in dir(cls):
                prefix, _, node_name = name.partition("_")
                if prefix not in ("visit", "leave") or not node_name:
                    continue
                if getattr(cls, name) is getattr(cst.CSTVisitor, name, None):
                    continue
                kind = getattr(cst, node_name)
                visit, leave = found.get(kind, (None, None))
                found[kind] = (name, leave) if prefix == "visit" else (visit, name)
            cls._own_table = found
        return found

    def _own(self, kind: type, which: int):
        name = self._own_methods().get(kind, (None, None))[which]
        if name is None or (kind is cst.SimpleString and not self._wants_strings):
            return None
        return getattr(self, name)

    def _handlers(self, kind: type) -> Handlers:
        if self._prune and inert(kind):
            return None, None, (), True
        code_visits = self._code_visits.get(kind)
        code_leaves = self._code_leaves.get(kind)
        leaves = []
        if code_leaves:
            leaves.append(partial(self._dispatch, code_leaves))
        own_leave = self._own(kind, 1)
        if own_leave is not None:
            leaves.append(own_leave)
        return (
            self._own(kind, 0),
            partial(self._dispatch, code_visits) if code_visits else None,
            tuple(leaves),
            False,
        )

    @staticmethod
    def _dispatch(handlers, node: cst.CSTNode) -> None:
        for code, handler in handlers:
            try:
                handler(node)
            except RuleError:
                raise
            except Exception as exc:  # noqa: BLE001 - attributed to the rule
                raise RuleError(code, exc) from exc

    def _code_hit(self, rule, pattern, node, variables, edits, statements) -> None:
        stack = tuple(self._statements) if statements is None else statements
        for edit in edits:
            if edit.action in STATEMENT_ACTIONS or edit.action == "prepend-to-body":
                stack += (id(edit.target),)
        first, rest = (edits[0], tuple(edits[1:])) if edits else (None, ())
        self.hits.append(Hit(rule, pattern, node, variables, first, stack, rest))

    # what Context reads
    def context_of(self, node: cst.CSTNode) -> tuple[str, cst.CSTNode | None]:
        return self._context.get(id(node), ("value", None))

    @property
    def current_scope(self) -> Scope:
        return self._scopes[-1]

    @property
    def statement_stack(self) -> tuple[int, ...]:
        return tuple(self._statements)

    def variables_of(self, node: cst.CSTNode, qname: str = "") -> dict[str, str]:
        return self._variables(node, qname)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self._wants_strings:
            value = string_value(node)
            if value is not None:
                self.strings.add(value)

    # LibCST calls these for every field of every node, to dispatch `visit_Node_field`
    # methods; the matcher has none, and skipping the lookups saves a quarter of the traversal.
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    # ---- names -------------------------------------------------------------------------------

    def resolve(self, node: cst.BaseExpression, use: bool = True) -> str | None:
        """The qualified name of a Name / Attribute chain bound by an import, or None. `use`:
        the node reads the name (the engine's own walk); a code rule only asking what a node
        names (`ctx.qname`, perhaps of an assignment target) does not make an import used."""
        key = id(node)
        if key in self._resolved:
            found = self._resolved[key]
        else:
            parts = []
            head = node
            while isinstance(head, cst.Attribute):
                parts.append(head.attr.value)
                head = head.value
            found = None
            if isinstance(head, cst.Name) and head.value in self._bound:
                binding = self._scopes[-1].lookup(head.value)
                if binding is not None:
                    found = (".".join([binding.qname, *reversed(parts)]), binding)
                elif head.value in self._from_star:
                    found = (".".join([self._from_star[head.value], *reversed(parts)]), None)
            self._resolved[key] = found
        if found is None:
            return None
        if use and found[1] is not None and key not in self._used:
            self._used.add(key)
            found[1].uses += 1
        return found[0]

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def _star_names(self) -> frozenset[str]:
        """Names a star import brings in (`from m import *`), as far as the rules know them:
        a name the file neither imports nor defines at the top, whose `m.name` some rule names
        exactly. They resolve to `m.name` like any imported name."""
        self._from_star: dict[str, str] = {}
        if not self.table.star_modules:
            return frozenset()
        defined = set(self.table.bound_names)
        for statement in self.module.body:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                defined.add(statement.name.value)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        defined.update(
                            t.target.value for t in small.targets if isinstance(t.target, cst.Name)
                        )
        for module in self.table.star_modules:
            prefix = module + "."
            for qname in self.rules.exact_names():
                name = qname[len(prefix) :] if qname.startswith(prefix) else ""
                if name and "." not in name and name not in defined:
                    self._from_star.setdefault(name, qname)
        return frozenset(self._from_star)

    def imports_module(self, modules: tuple[str, ...]) -> bool:
        return any(q == m or q.startswith(m + ".") for q in self.imported for m in modules)

    # ---- scopes and statements ----------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._statements.append(id(node))
        self._skip_names.add(id(node.name))
        self._scopes.append(self.table.scopes[id(node)])

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.pop()
        self._statements.pop()

    visit_ClassDef = visit_FunctionDef
    leave_ClassDef = leave_FunctionDef

    def _enter(self, node: cst.CSTNode) -> None:
        self._statements.append(id(node))

    def _exit(self, node: cst.CSTNode) -> None:
        self._statements.pop()

    visit_SimpleStatementLine = _enter
    leave_SimpleStatementLine = _exit
    visit_While = visit_Try = visit_TryStar = visit_Match = _enter
    leave_While = leave_Try = leave_TryStar = leave_Match = _exit

    def visit_If(self, node: cst.If) -> None:
        self._statements.append(id(node))
        if is_main_guard(node.test):
            self.main_guard += 1

    def leave_If(self, node: cst.If) -> None:
        self._statements.pop()
        if is_main_guard(node.test):
            self.main_guard -= 1

    visit_For = _enter
    leave_For = _exit

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

    def visit_Assign(self, node: cst.Assign) -> None:
        self._context[id(node.value)] = ("assigned", node)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._skip_names.add(id(target.target))
            elif self.rules.env_writes and isinstance(target.target, cst.Subscript):
                self._env_subscript(target.target, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._skip_names.add(id(node.target))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip_names.add(id(node.keyword))

    def visit_Import(self, node: cst.Import) -> bool:
        if self.rules.imports:
            for alias in node.names:
                module = dotted_name(alias.name)
                if module is not None:
                    self._imports.append((node, module, alias))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if self.rules.imports and node.module is not None and not node.relative:
            module = dotted_name(node.module)
            if module is not None:
                self._imports.append((node, module, node))
        return False

    # ---- hits -----------------------------------------------------------------------------------

    def _variables(
        self, node: cst.CSTNode, qname: str = "", captured: tuple[str, ...] = ()
    ) -> dict[str, str]:
        variables = dict(self.target.placeholders())
        variables["qname"] = qname
        variables["attr"] = qname.rsplit(".", 1)[-1] if qname else ""
        for index, value in enumerate(captured, start=1):
            variables[f"glob{index}"] = value
        if isinstance(node, cst.Call):
            variables["name"] = self.code(node.func)
            plain = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in node.args]
            variables["args"] = ", ".join(self.code(a) for a in plain)
            positional = [a for a in node.args if a.keyword is None and not a.star]
            for index, arg in enumerate(positional):
                variables[f"arg{index}"] = self.code(arg.value)
            for arg in node.args:
                if arg.keyword is not None:
                    variables[f"kw_{arg.keyword.value}"] = self.code(arg.value)
        else:
            variables["name"] = self.code(node)
        variables["call"] = self._as_written(node, variables["name"])
        return variables

    def _as_written(self, node: cst.CSTNode, name: str) -> str:
        """The reported code as written, for messages: a call with its arguments
        (`xm.xla_device(1)`), shortened to `name(...)` when long or on several lines."""
        text = self.code(node).strip()
        if "\n" in text or len(text) > CALL_IN_MESSAGE_MAX:
            return f"{name}(...)" if isinstance(node, cst.Call) else name
        return text

    def _hit(
        self,
        entry: Entry,
        node: cst.CSTNode,
        variables: dict[str, str],
        owner: cst.CSTNode | None,
        statements: tuple[int, ...] | None = None,
    ) -> Hit:
        pattern = entry.pattern
        extra = self._predicate_variables.pop((id(pattern), id(node)), None)
        if extra:
            variables = {**variables, **extra}
        edit = None
        if pattern.action is not None:
            target = owner if pattern.action in STATEMENT_ACTIONS else node
            if target is not None:
                edit = Edit(target, pattern.action, pattern.params, variables, entry.rule.code)
        stack = tuple(self._statements) if statements is None else statements
        hit = Hit(entry.rule, pattern, node, variables, edit, stack)
        self.hits.append(hit)
        return hit

    def _passes(self, pattern: Pattern, node: cst.CSTNode, context: str) -> bool:
        if pattern.where != "any" and pattern.where != context:
            return False
        if isinstance(node, cst.Call):
            if pattern.args == "none" and node.args:
                return False
            if pattern.args == "one" and len(node.args) != 1:
                return False
            if pattern.args == "keywords" and (
                not node.args or any(a.keyword is None for a in node.args)
            ):
                return False
            if pattern.arg_values:
                positional = [a.value for a in node.args if a.keyword is None and not a.star]
                for index, wanted in pattern.arg_values.items():
                    if index >= len(positional) or not self._value_matches(
                        positional[index], wanted
                    ):
                        return False
            if pattern.keywords or pattern.no_keywords or pattern.keyword_values:
                given = {a.keyword.value: a for a in node.args if a.keyword is not None}
                if pattern.keywords and not any(k in given for k in pattern.keywords):
                    return False
                if any(k in given for k in pattern.no_keywords):
                    return False
                for name, code in pattern.keyword_values.items():
                    if name not in given or self.code(given[name].value) != code:
                        return False
        if pattern.target_devices and self.target.device not in pattern.target_devices:
            return False
        if pattern.when is None:
            return True
        try:
            answer = self.rules.predicates[id(pattern)](node, self.ctx)
        except Exception as exc:  # noqa: BLE001 - attributed to the rule by the caller
            raise RuleError(self._rule_of(pattern), exc) from exc
        if isinstance(answer, dict):
            # a predicate may hand template variables to the pattern's fix and message
            self._predicate_variables[id(pattern), id(node)] = answer
        return bool(answer)

    def _rule_of(self, pattern: Pattern) -> str:
        for rule in self.rules.rules:
            if pattern in rule.patterns:
                return rule.code
        return "?"

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

    def _captured(self, entry: Entry, qname: str) -> tuple[str, ...]:
        if entry.glob is None:
            return ()
        found = entry.glob.match(qname)
        return found.groups() if found else ()

    # ---- calls, references, strings ----------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        context, owner = self._context.get(id(node), ("value", None))
        func = node.func
        qname = self.resolve(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if qname is not None:
            self.called.add(qname)
            self._call_funcs.add(id(func))
            entries = self.rules.call_entries(qname)
            if entries:
                best = self._best(entries, node, context)
                if best:
                    self._consumed.add(id(func))
                    self._reported_calls.append((node, {e.rule.code for e in best}))
                    for entry in best:
                        variables = self._variables(node, qname, self._captured(entry, qname))
                        if context == "with-item":
                            variables["item"] = str(self._with_index[id(node)])
                        self._hit(entry, node, variables, owner)
            if self.rules.env_writes and qname in ENV_CALLS:
                self._env_call(node, qname, context, owner)
        elif isinstance(func, cst.Attribute) and func.attr.value in self.rules.methods:
            self._method(node, func.attr.value, context, owner)
        if self.rules.device_strings:
            self._device_strings_in_call(node, qname)
        if self.rules.keywords:
            self._keywords(node, qname)

    def _method(self, node: cst.Call, method: str, context: str, owner) -> None:
        best = self._best(self.rules.methods[method], node, context)
        for entry in best:
            variables = self._variables(node)
            variables["receiver"] = self.code(node.func.value)  # `x` of `x.double()`
            self._hit(entry, node, variables, owner)

    def _keywords(self, node: cst.Call, qname: str | None) -> None:
        for arg in node.args:
            if arg.keyword is None or arg.keyword.value not in self.rules.keywords:
                continue
            chosen: dict[str, Entry] = {}
            for entry in self.rules.keywords[arg.keyword.value]:
                pattern = entry.pattern
                if entry.rule.code in chosen:
                    continue
                if pattern.names and not (
                    qname and any(name_match(qname, n) is not None for n in pattern.names)
                ):
                    continue
                if pattern.values and not self._value_matches(arg.value, pattern.values):
                    continue
                if self._passes(pattern, node, "value"):
                    chosen[entry.rule.code] = entry
            for entry in chosen.values():
                variables = self._variables(node, qname or "")
                variables.update(keyword=arg.keyword.value, value=self.code(arg.value))
                self._hit(entry, arg, variables, None)

    def _value_matches(self, value: cst.BaseExpression, wanted: tuple[str, ...]) -> bool:
        code = self.code(value)
        if code in wanted:
            return True
        text = string_value(value)
        if text is not None and (f'"{text}"' in wanted or f"'{text}'" in wanted):
            return True
        if isinstance(value, (cst.Name, cst.Attribute)):
            qname = self.resolve(value)
            return qname is not None and qname in wanted
        return False

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
            if is_device_string(value, entry.pattern.names):
                variables = dict(self.target.placeholders())
                variables.update(name=self.code(node), value=value or "", qname="")
                self._hit(entry, node, variables, None)
                return

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.compared.add(id(node.left))
        self.compared.update(id(target.comparator) for target in node.comparisons)
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

    def _is_called(self, node: cst.CSTNode) -> bool:
        return id(node) in self._call_funcs

    def leave_Call(self, node: cst.Call) -> None:
        if self._reported_calls and self._reported_calls[-1][0] is node:
            self._reported_calls.pop()

    def _reference(self, node: cst.CSTNode, qname: str) -> None:
        """Report the most specific rule for the chain or for a chain it starts with
        (`NeuronTrainer.from_pretrained` is a use of `NeuronTrainer`)."""
        found: tuple[int, cst.CSTNode, str, list[Entry]] | None = None
        current: cst.CSTNode = node
        current_name = qname
        while True:
            entries = self.rules.reference_entries(current_name)
            if entries:
                context = self._context.get(id(current), ("value", None))[0]
                best = self._best(entries, current, context)
                if best and (found is None or len(best[0].name) > found[0]):
                    found = (len(best[0].name), current, current_name, best)
            if not isinstance(current, cst.Attribute) or "." not in current_name:
                break
            current, current_name = current.value, current_name.rsplit(".", 1)[0]
        if found is None:
            return
        _, node, qname, best = found
        context, owner = self._context.get(id(node), ("value", None))
        inside = {code for _, codes in self._reported_calls for code in codes}
        if self.rules.owned_elsewhere(qname, len(best[0].name), call=self._is_called(node)):
            return  # a rule that is switched off (for this file) owns this name
        if self.rules.claimed_by_code(qname, len(best[0].name)):
            return  # a code rule reports this name itself
        for entry in best:
            if entry.rule.code in inside:
                continue  # `xm.REDUCE_SUM` inside the `xm.all_reduce(...)` already reported
            self._hit(
                entry, node, self._variables(node, qname, self._captured(entry, qname)), owner
            )

    # ---- environment variables set in code ----------------------------------------------------

    def _env_entries(self, var: str) -> list[Entry]:
        return [e for e in self.rules.env_writes if name_match(var, e.name) is not None]

    def _env_hit(self, var: str, node: cst.CSTNode, context: str, owner) -> None:
        chosen: dict[str, Entry] = {}
        for entry in sorted(self._env_entries(var), key=lambda e: -len(e.name)):
            if entry.rule.code not in chosen and self._passes(entry.pattern, node, context):
                chosen[entry.rule.code] = entry
        if not chosen:
            return
        # one finding per variable: the most specific rule (XLA_USE_BF16 over XLA_*)
        entry = min(chosen.values(), key=lambda e: (-len(e.name), e.rule.code))
        variables = dict(self.target.placeholders())
        variables.update(var=var, name=var, qname="")
        self._hit(entry, node, variables, owner)

    def _env_subscript(self, target: cst.Subscript, assign: cst.Assign) -> None:
        if self.resolve(target.value) != "os.environ" or len(target.slice) != 1:
            return
        index = target.slice[0].slice
        var = string_value(index.value) if isinstance(index, cst.Index) else None
        if var is not None:
            context = "statement" if len(assign.targets) == 1 else "value"
            self._env_hit(var, target, context, assign)

    def _env_call(self, node: cst.Call, qname: str, context: str, owner) -> None:
        names: list[tuple[str, cst.CSTNode]] = []
        if qname == "os.environ.update":
            for arg in node.args:
                if arg.keyword is not None:
                    names.append((arg.keyword.value, arg))
                elif isinstance(arg.value, cst.Dict):
                    for element in arg.value.elements:
                        key = string_value(getattr(element, "key", None))
                        if key is not None:
                            names.append((key, element))
        elif node.args:
            key = string_value(node.args[0].value)
            if key is not None:
                names.append((key, node))
        for var, where in names:
            self._env_hit(var, where, "value", None)

    # ---- whole-file checks ----------------------------------------------------------------------

    def visit_Annotation(self, node: cst.Annotation) -> None:
        """A string annotation is code: the imports it names are in use (the import cleaner
        keeps them), and a legacy name in it is reported on the string, with no fix (a fix
        does not rewrite code inside a string)."""
        for string, expression in annotation_strings(node):
            for chain in name_chains(expression):
                qname = self._resolve_in_string(chain)
                if qname is not None:
                    self._string_reference(string, chain, qname)

    def _resolve_in_string(self, chain: cst.CSTNode) -> str | None:
        """`resolve` for a chain parsed from a string (not a node of the module: nothing is
        cached by its id)."""
        parts = []
        head = chain
        while isinstance(head, cst.Attribute):
            parts.append(head.attr.value)
            head = head.value
        assert isinstance(head, cst.Name)
        self._annotation_reads.add(head.value)
        if head.value not in self._bound:
            return None
        binding = self._scopes[-1].lookup(head.value)
        return None if binding is None else ".".join([binding.qname, *reversed(parts)])

    def _string_reference(self, string: cst.BaseString, chain: cst.CSTNode, qname: str) -> None:
        name = qname
        while True:
            best = self._best(self.rules.reference_entries(name), string, "value")
            if best or "." not in name:
                break
            name = name.rsplit(".", 1)[0]
        if not best:
            return
        if self.rules.owned_elsewhere(name, len(best[0].name), call=False):
            return
        if self.rules.claimed_by_code(name, len(best[0].name)):
            return
        written = cst.Module([]).code_for_node(chain)
        for entry in best:
            variables = self._variables(string, name, self._captured(entry, name))
            variables.update(name=written, call=written)
            hit = self._hit(entry, string, variables, None)
            hit.edit, hit.extra_edits = None, ()

    def leave_Module(self, node: cst.Module) -> None:
        # an import binding is unused only when no binding of its name is read: the fixer's
        # import cleaning goes by name, and a finding it would not fix must not say "fixable"
        # (`import torch, torch_xla` then `import torch_xla`; a function's own `import torch_xla`)
        self._read_names = {b.name for b in self.table.bindings if b.uses}
        self._read_names |= self._annotation_reads
        self._finish_imports()
        self._finish_unused_imports()

    def _unused(self, binding: Binding) -> bool:
        if binding.uses or binding.name in self._read_names:
            return False
        # the fixer keeps an import whose name any code reads (it goes by name): a read the
        # scopes give to another binding (`f = f` under a function's own `from m import f`)
        # keeps it too, so the finding must not call it unused and fixable
        if self._loaded is None:
            loaded = LoadedNames()
            self.module.visit(loaded)
            self._loaded = loaded.names
        return binding.name not in self._loaded

    def _bindings_of(self, statement: cst.CSTNode, alias: cst.CSTNode) -> list[Binding]:
        return [
            b
            for b in self.table.bindings
            if b.statement is statement and (alias is statement or b.alias is alias)
        ]

    def _finish_imports(self) -> None:
        for statement, module, alias in self._imports:
            bindings = self._bindings_of(statement, alias)
            unused: bool | None = None  # asked only of the imports a rule names
            for entry in self.rules.imports:
                pattern = entry.pattern
                if name_match(module, entry.name) is None:
                    continue
                if pattern.unused is not None:
                    if unused is None:
                        unused = all(self._unused(b) for b in bindings)
                    if pattern.unused != unused:
                        continue
                if not self._passes(pattern, statement, "statement"):
                    continue
                variables = dict(self.target.placeholders())
                variables.update(name=module, qname=module)
                edit = None
                if pattern.action is not None:
                    params = {**pattern.params, "names": [b.name for b in bindings]}
                    edit = Edit(statement, pattern.action, params, variables, entry.rule.code)
                self.hits.append(Hit(entry.rule, pattern, alias, variables, edit, ()))
                break

    def _finish_unused_imports(self) -> None:
        for entry in self.rules.unused_imports:
            for binding in self.table.bindings:
                if name_match(binding.imported, entry.name) is not None and self._unused(binding):
                    if any(h.node is binding.alias for h in self.hits):
                        continue  # a more specific import rule already reported it
                    variables = dict(self.target.placeholders())
                    variables.update(name=binding.name, qname=binding.qname)
                    edit = None
                    if entry.pattern.action is not None:
                        params = {**entry.pattern.params, "names": [binding.name]}
                        edit = Edit(
                            binding.statement,
                            entry.pattern.action,
                            params,
                            variables,
                            entry.rule.code,
                        )
                    self.hits.append(
                        Hit(entry.rule, entry.pattern, binding.alias, variables, edit, ())
                    )
