"""Apply the chosen edits of one file in one transform, then clean and add imports."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

import libcst as cst

from neuron_migrate.engine import edits as actions
from neuron_migrate.engine.errors import RuleError
from neuron_migrate.engine.matcher import Edit, Hit
from neuron_migrate.engine.names import matches_name
from neuron_migrate.engine.noqa import suppresses
from neuron_migrate.engine.scopes import LoadedNames, collect_imports, dotted_name


class FixError(Exception):
    """The fix of this file cannot be made safely; the file is left alone."""


def _semicolons(small: list[cst.BaseSmallStatement]) -> list[cst.BaseSmallStatement]:
    joined = [
        s.with_changes(semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")))
        for s in small[:-1]
    ]
    return [*joined, small[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)]


def _with_trailing(statement, trailing: cst.TrailingWhitespace):
    """Give the last simple line of a statement (descending into a new block) this ending."""
    if isinstance(statement, cst.SimpleStatementLine):
        return statement.with_changes(trailing_whitespace=trailing)
    body = getattr(statement, "body", None)
    if isinstance(body, cst.IndentedBlock) and body.body and trailing.comment is not None:
        last = _with_trailing(body.body[-1], trailing)
        return statement.with_changes(body=body.with_changes(body=[*body.body[:-1], last]))
    return statement


@dataclass
class _Applier(cst.CSTTransformer):
    expression_edits: dict[int, list[Edit]]
    statement_edits: dict[int, list[Edit]]
    # ids of the statements worth visiting; None: all
    dirty: set[int] | None
    applied: list[Edit] = field(default_factory=list)
    declined: list[tuple[Edit, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()
        self._inserted_pass: set[int] = set()

    # no visit_Node_field methods here: skip LibCST's per-field dispatch lookups
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_visit(self, node: cst.CSTNode) -> bool:
        return not (
            self.dirty is not None
            and isinstance(node, cst.BaseStatement)
            and id(node) not in self.dirty
        )

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        for edit in self.expression_edits.get(id(original), ()):
            try:
                updated = actions.EXPRESSION_ACTIONS[edit.action](
                    updated, edit.params, edit.variables
                )
                self.applied.append(edit)
            except actions.Decline as exc:
                self.declined.append((edit, str(exc)))
            except Exception as exc:  # noqa: BLE001 - named after the rule that asked for it
                raise RuleError(edit.rule, exc) from exc
        if isinstance(original, cst.FormattedString) and updated is not original:
            return actions.quotes_for_fstring(updated)
        if isinstance(original, (cst.IndentedBlock, cst.Module)):
            return self._block(original, updated)
        if isinstance(original, cst.SimpleStatementSuite):
            small = self._small(original.body, updated.body)
            if small is not None:
                return updated.with_changes(body=_semicolons(small or [cst.Pass()]))
        return updated

    def _run(self, edits: list[Edit], node: cst.CSTNode) -> list | cst.CSTNode | None:
        """Apply statement edits in turn. A list (new statements) ends the chain; a node is the
        edited statement; None: nothing changed."""
        result: list | cst.CSTNode = node
        # insertions after the statement go last, so that one rule's rewrite of the statement
        # and several rules' insertions after it all apply
        edits = sorted(edits, key=lambda e: e.action == "insert-after")
        for index, edit in enumerate(edits):
            try:
                result = actions.STATEMENT_ACTIONS[edit.action](result, edit.params, edit.variables)
                self.applied.append(edit)
            except actions.Decline as exc:
                self.declined.append((edit, str(exc)))
                continue
            except Exception as exc:  # noqa: BLE001 - named after the rule that asked for it
                raise RuleError(edit.rule, exc) from exc
            if isinstance(result, list):
                return self._insert_more(result, edits[index + 1 :], node)
        return None if result is node else result

    def _insert_more(self, result: list, rest: list[Edit], node: cst.CSTNode) -> list:
        """After the first edit that gave statements, the insertions after the same statement
        follow what took its place."""
        for edit in rest:
            if edit.action != "insert-after":
                self.declined.append((edit, "another edit replaced the statement"))
                continue
            try:
                result = [*result, *actions.insert_after(node, edit.params, edit.variables)[1:]]
                self.applied.append(edit)
            except actions.Decline as exc:
                self.declined.append((edit, str(exc)))
        return result

    def _small(self, originals, updateds) -> list[cst.BaseSmallStatement] | None:
        """The small statements of a `a; b` line or one-line suite after their edits."""
        if not any(id(s) in self.statement_edits for s in originals):
            return None
        small: list[cst.BaseSmallStatement] = []
        for orig, upd in zip(originals, updateds):
            result = (
                self._run(self.statement_edits[id(orig)], upd)
                if id(orig) in self.statement_edits
                else None
            )
            if result is None:
                small.append(upd)
            elif not isinstance(result, list):
                small.append(result)
            else:
                for item in result:
                    if item is actions.KEEP:
                        small.append(upd)
                    elif isinstance(item, cst.SimpleStatementLine):
                        small.extend(item.body)
                    else:
                        raise FixError("a block statement cannot share a line with `;`")
        return small

    def _statement(self, orig: cst.BaseStatement, upd: cst.BaseStatement) -> list | None:
        """The statements replacing one statement of a block; None: unchanged."""
        if id(orig) in self.statement_edits:
            result = self._run(self.statement_edits[id(orig)], upd)
            if result is not None and not isinstance(result, list):
                result = [result]
        elif isinstance(orig, cst.SimpleStatementLine):
            if len(orig.body) == 1 and id(orig.body[0]) in self.statement_edits:
                result = self._run(self.statement_edits[id(orig.body[0])], upd.body[0])
                if result is not None and not isinstance(result, list):
                    result = [upd.with_changes(body=[result])]
                elif result:
                    out = [upd if item is actions.KEEP else item for item in result]
                    if out[0] is not upd and not isinstance(out[0], actions.FooterCarrier):
                        # what replaces a line keeps the comment lines above it
                        out[0] = out[0].with_changes(
                            leading_lines=[*upd.leading_lines, *out[0].leading_lines]
                        )
                    if out[-1] is not upd:
                        # the line's own comment stays with what replaced the line
                        out[-1] = _with_trailing(out[-1], upd.trailing_whitespace)
                    result = out
            else:
                small = self._small(orig.body, upd.body)
                result = (
                    None
                    if small is None
                    else ([upd.with_changes(body=_semicolons(small))] if small else [])
                )
        else:
            return None
        if result is None:
            return None
        return [upd if item is actions.KEEP else item for item in result]

    def _emptied(self, statement: cst.CSTNode) -> bool:
        """An `if` with no else, or a `try` with no else / finally, whose body is only the
        `pass` the fixes left: the `if` tests nothing with side effects, so it does nothing;
        the `try`'s handlers can no longer run. Either goes."""
        if not isinstance(statement, (cst.If, cst.Try)):
            return False
        body = statement.body
        if not (
            isinstance(body, cst.IndentedBlock)
            and len(body.body) == 1
            and id(body.body[0]) in self._inserted_pass
            and statement.orelse is None
        ):
            return False
        inner = cst.Module(body=[statement.with_changes(leading_lines=())]).code
        if "#" in inner:
            return False  # a comment inside would go with it; keep the block instead
        if isinstance(statement, cst.Try):
            return statement.finalbody is None
        return _pure(statement.test)

    def _block(self, original, updated):
        body: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        blank: list[cst.EmptyLine] = []
        changed = False
        for orig, upd in zip(original.body, updated.body):
            result = self._statement(orig, upd)
            if result is None and self._emptied(upd):
                result = []  # an `if` / `try` whose whole body the fixes removed
            if result is None:
                result = [upd]
            else:
                changed = True
                if not result:
                    # a removed statement's comments stay (with their blank lines), above
                    # what comes next; bare blank lines go with it
                    if any(line.comment is not None for line in upd.leading_lines):
                        carried.extend(upd.leading_lines)
                    elif upd.leading_lines and not blank:
                        blank = list(upd.leading_lines)
            for item in result:
                if isinstance(item, actions.FooterCarrier):
                    carried.extend(item.lines)
                    continue
                if carried:
                    item = item.with_changes(leading_lines=[*carried, *item.leading_lines])
                    carried = []
                elif blank and not item.leading_lines and body:
                    # a blank line that separated the removed statement stays as a separator
                    item = item.with_changes(leading_lines=blank)
                blank = []
                body.append(item)
        if not changed:
            return updated
        # a `pass` an inner block got is not needed once its statements joined a fuller block
        if len(body) > 1:
            body = [s for s in body if id(s) not in self._inserted_pass]
        if isinstance(updated, cst.Module):
            return updated.with_changes(body=body, footer=[*carried, *updated.footer])
        if not body:
            stub = cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=carried)
            self._inserted_pass.add(id(stub))
            return updated.with_changes(body=[stub])
        return updated.with_changes(body=body, footer=[*carried, *updated.footer])


def _pure(test: cst.BaseExpression) -> bool:
    """A condition made of names, attributes, literals, comparisons and boolean operators."""
    if isinstance(test, (cst.Name, cst.SimpleString, cst.Integer)):
        return True
    if isinstance(test, cst.Attribute):
        return _pure(test.value)
    if isinstance(test, cst.Comparison):
        return _pure(test.left) and all(_pure(c.comparator) for c in test.comparisons)
    if isinstance(test, cst.BooleanOperation):
        return _pure(test.left) and _pure(test.right)
    if isinstance(test, cst.UnaryOperation):
        return _pure(test.expression)
    if isinstance(test, (cst.Tuple, cst.List)):
        return all(_pure(e.value) for e in test.elements)
    return False


# ---- imports --------------------------------------------------------------------------------


def clean_imports(
    module: cst.Module,
    legacy: tuple[str, ...],
    replaced: frozenset[str] = frozenset(),
    noqa_codes: tuple[str, ...] = (),
) -> tuple[cst.Module, int]:
    """Remove imports of `legacy` names that nothing in the module reads any more (unless the
    line's `# noqa` names one of `noqa_codes`, the unused-import rules). Returns the module and the body index of the first removed
    top-level import (-1 if none), where the imports the fixes need are best placed."""
    table = collect_imports(module)
    loaded = LoadedNames()
    module.visit(loaded)
    remove: dict[int, list[str]] = {}
    for binding in table.bindings:
        if not matches_name(binding.imported, legacy):
            continue
        # a name the fixes now import from elsewhere (`get_peft_model` from peft) is not a use
        if binding.name in loaded.names and binding.name not in replaced:
            continue
        comment = binding.line.trailing_whitespace.comment if binding.line is not None else None
        if comment is not None and any(suppresses(comment.value, c) for c in noqa_codes):
            continue
        remove.setdefault(id(binding.statement), []).append(binding.name)
    stars = _unused_legacy_stars(module, legacy, replaced)
    if not remove and not stars:
        return module, -1
    if stars:
        module = module.visit(_DropStatements(stars))
        if not remove:
            return module, -1
    top_index = -1
    for index, stmt in enumerate(module.body):
        if isinstance(stmt, cst.SimpleStatementLine) and any(id(s) in remove for s in stmt.body):
            top_index = index
            break
    edits = {
        key: [Edit(cst.Pass(), "remove-import", {"names": names}, {})]
        for key, names in remove.items()
    }
    new = module.visit(_Applier({}, edits, None))
    return new, top_index


def _free_names(code: str) -> set[str]:
    """Names the module reads but never binds (not builtins): what a star import could supply."""
    import ast
    import builtins

    tree = ast.parse(code)
    loaded, bound = set(), set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias) and node.name != "*":
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return loaded - bound


def _unused_legacy_stars(
    module: cst.Module, legacy: tuple[str, ...], added: frozenset[str] = frozenset()
) -> set[int]:
    """Ids of `from <legacy> import *` statements that nothing can still read from: the fixes
    rewrote every name that came through them (`added`: names the fixes are about to import)."""
    stars = [
        node
        for line in module.body
        if isinstance(line, cst.SimpleStatementLine)
        for node in line.body
        if isinstance(node, cst.ImportFrom)
        and isinstance(node.names, cst.ImportStar)
        and node.module is not None
        and not node.relative
        and matches_name(dotted_name(node.module) or "", legacy)
    ]
    if not stars:
        return set()
    try:
        free = _free_names(module.code) - added
    except SyntaxError:
        return set()
    return {id(node) for node in stars} if not free else set()


class _DropStatements(cst.CSTTransformer):
    def __init__(self, ids: set[int]) -> None:
        super().__init__()
        self.ids = ids

    def leave_SimpleStatementLine(self, original, updated):
        if any(id(s) in self.ids for s in original.body):
            kept = [u for o, u in zip(original.body, updated.body) if id(o) not in self.ids]
            if not kept:
                return cst.RemoveFromParent()
            return updated.with_changes(body=kept)
        return updated


def _binding_of(statement: str) -> tuple[str, str]:
    table = collect_imports(cst.parse_module(statement + "\n"))
    binding = table.bindings[0]
    return binding.name, binding.qname


def _import_key(stmt: cst.BaseStatement) -> str | None:
    """The module a top-level absolute import line imports (for ordering), else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    node = stmt.body[0]
    if isinstance(node, cst.Import):
        return (dotted_name(node.names[0].name) or "").lower()
    if isinstance(node, cst.ImportFrom) and not node.relative and node.module is not None:
        module = dotted_name(node.module) or ""
        return None if module == "__future__" else module.lower()
    return None


def _group(key: str) -> int:
    """isort's sections, as far as a name tells: 0 the standard library, 1 everything else."""
    return 0 if key.split(".")[0] in sys.stdlib_module_names else 1


def _insert_at(module: cst.Module, key: str) -> int:
    """Where `import <key>` goes: in the import block at the top of the module (after the
    docstring), among the imports of its own section (standard library or not), before the first
    that sorts after it; at the top when the module does not start with imports (never below
    code that uses it)."""
    body = module.body
    index = 0
    if (
        body
        and isinstance(body[0], cst.SimpleStatementLine)
        and isinstance(body[0].body[0], cst.Expr)
    ):
        if isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
            index = 1
    group = _group(key)
    last_absolute = last_same = first_later_group = None
    for i in range(index, len(body)):
        stmt = body[i]
        is_import = isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
        )
        if not is_import:
            break
        stmt_key = _import_key(stmt)
        if stmt_key is None:
            if _is_future(stmt):
                index = i + 1
            continue
        stmt_group = _group(stmt_key)
        if stmt_group == group:
            if stmt_key > key:
                return i
            last_same = i
        elif stmt_group > group and first_later_group is None:
            first_later_group = i
        last_absolute = i
    if last_same is not None:
        return last_same + 1
    if first_later_group is not None:
        return first_later_group
    return last_absolute + 1 if last_absolute is not None else index


def _is_future(stmt: cst.SimpleStatementLine) -> bool:
    node = stmt.body[0]
    return (
        isinstance(node, cst.ImportFrom) and dotted_name(node.module) == "__future__"
        if node.module
        else False
    )


def add_imports(module: cst.Module, needed: list[str]) -> cst.Module:
    """Add the `import x` statements the fixes need, once, unless the module binds them."""
    table = collect_imports(module)
    bound = {b.name: b.qname for b in table.bindings if b.scope is table.module}
    # only an import in the block at the top is sure to run before the code the fixes wrote;
    # a later or nested `import torch` gets a twin at the top (importing twice is harmless)
    top = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and isinstance(
            stmt.body[0], (cst.Import, cst.ImportFrom)
        ):
            top.add(id(stmt))
        elif not (isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr)):
            break
    early = {b.name for b in table.bindings if b.scope is table.module and id(b.line) in top}
    for statement in dict.fromkeys(needed):
        name, qname = _binding_of(statement)
        if bound.get(name) == qname and name in early:
            continue
        if name in bound and bound[name] != qname:
            raise FixError(f"the fix needs `{statement}` but `{name}` is already {bound[name]}")
        bound[name] = qname
        early.add(name)
        line = cst.parse_statement(statement + "\n")
        merged = _merge_from_import(module, line)
        if merged is not None:
            module = merged
            continue
        key = _import_key(line) or ""
        at = _insert_at(module, key)
        body = list(module.body)
        after = body[at] if at < len(body) else None
        after_key = _import_key(after) if after is not None else None
        if after_key is not None and _group(after_key) == _group(key) and after.leading_lines:
            # joining the front of a section: the blank line that opened it stays in front
            line = line.with_changes(leading_lines=after.leading_lines)
            body[at] = after.with_changes(leading_lines=[])
        body.insert(at, line)
        module = module.with_changes(body=body)
    return module


def _merge_from_import(module: cst.Module, line: cst.SimpleStatementLine) -> cst.Module | None:
    """`from transformers import Trainer` joins an existing top-level
    `from transformers import TrainingArguments` line instead of adding a second one."""
    new = line.body[0]
    if not isinstance(new, cst.ImportFrom) or isinstance(new.names, cst.ImportStar):
        return None
    module_name = dotted_name(new.module) if new.module else None
    for index, stmt in enumerate(module.body):
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
            continue
        old = stmt.body[0]
        if (
            isinstance(old, cst.ImportFrom)
            and not old.relative
            and old.module is not None
            and dotted_name(old.module) == module_name
            and not isinstance(old.names, cst.ImportStar)
        ):
            names = list(old.names)
            last = names[-1]
            trailing = (
                last.comma if isinstance(last.comma, cst.Comma) else cst.MaybeSentinel.DEFAULT
            )
            names[-1] = last.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            )
            names.append(new.names[0].with_changes(comma=trailing))
            body = list(module.body)
            body[index] = stmt.with_changes(body=[old.with_changes(names=names)])
            return module.with_changes(body=body)
    return None


def _imports_used(edit: Edit) -> list[str]:
    """The edit's imports whose name its rendered code really uses (an empty replacement,
    such as the cpu target's synchronize, needs none)."""
    params = edit.params
    texts = [params.get("template", ""), params.get("func", "")]
    texts += list(params.get("set-keywords", {}).values())
    texts += list(params.get("default-keywords", {}).values())
    rendered = " ".join(actions.render(t, edit.variables) for t in texts if t)
    used = []
    for template in params.get("imports", []):
        statement = actions.render(template, edit.variables)
        name, _ = _binding_of(statement)
        if re.search(rf"\b{re.escape(name)}\b", rendered):
            used.append(statement)
    return used


class _Inside(cst.CSTVisitor):
    """Ids of every node inside the given functions."""

    def __init__(self, functions: set[int]) -> None:
        super().__init__()
        self.functions = functions
        self.depth = 0
        self.inside: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.functions:
            self.depth += 1
        if self.depth:
            self.inside.add(id(node))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if id(original_node) in self.functions:
            self.depth -= 1


def _not_bound_locally(module: cst.Module, uses: list[tuple[Edit, str]]) -> list[str]:
    """The imports the edits need, less those every needing edit already has from an import
    in its own function (`def f(): import torch` in a module that imports lazily keeps doing
    so: no module-level `import torch` is added for code written inside `f`)."""
    if not uses:
        return []
    table = collect_imports(module)
    needed: list[str] = []
    inside: dict[str, set[int]] = {}
    for edit, statement in uses:
        name, qname = _binding_of(statement)
        if statement not in inside:
            functions = {
                key
                for key, scope in table.scopes.items()
                if scope.kind == "function"
                and (binding := scope.names.get(name)) is not None
                and binding.qname == qname
            }
            walker = _Inside(functions)
            if functions:
                module.visit(walker)
            inside[statement] = walker.inside
        if id(edit.target) not in inside[statement]:
            needed.append(statement)
    return needed


def apply(
    module: cst.Module,
    hits: list[Hit],
    legacy_imports: tuple[str, ...],
    noqa_codes: tuple[str, ...] = (),
) -> tuple[cst.Module, list[Edit], list[tuple[Edit, str]]]:
    """Apply the edits of `hits` in one transform; then imports left unused that match
    `legacy_imports` are removed and the imports the edits need are added."""
    expression_edits: dict[int, list[Edit]] = {}
    statement_edits: dict[int, list[Edit]] = {}
    dirty: set[int] = set()
    for hit in hits:
        for edit in hit.edits:
            bucket = statement_edits if edit.statement_level else expression_edits
            bucket.setdefault(id(edit.target), []).append(edit)
        if hit.edits:
            dirty.update(hit.statements)
    applier = _Applier(expression_edits, statement_edits, dirty)
    new = module.visit(applier)
    needed = _not_bound_locally(
        module, [(edit, imp) for edit in applier.applied for imp in _imports_used(edit)]
    )
    if legacy_imports and applier.applied:
        replaced = frozenset(_binding_of(statement)[0] for statement in needed)
        new, _ = clean_imports(new, legacy_imports, replaced, noqa_codes)
    if needed:
        new = add_imports(new, needed)
    return new, applier.applied, applier.declined
