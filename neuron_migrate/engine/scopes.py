"""Import bindings per scope, read from the file's own import statements.

A cheap walk over statements only (never expressions): this is what replaces LibCST's
scope analysis, which costs many times the parse itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst


@dataclass(eq=False)
class Binding:
    """A name bound by an import: `xm` -> `torch_xla.core.xla_model`."""

    name: str
    qname: str
    statement: cst.Import | cst.ImportFrom
    alias: cst.ImportAlias
    scope: Scope
    # the line (or one-line suite) holding the import: its trailing comment may hold a noqa
    line: cst.SimpleStatementLine | cst.SimpleStatementSuite | None = None
    uses: int = 0


@dataclass(eq=False)
class Scope:
    kind: str  # module | function | class
    parent: Scope | None
    # name -> Binding, or None when a parameter shadows an import of the same name
    names: dict[str, Binding | None] = field(default_factory=dict)

    def lookup(self, name: str) -> Binding | None:
        scope: Scope | None = self
        first = True
        while scope is not None:
            # a class body's names are not visible from the functions nested in it
            if (first or scope.kind != "class") and name in scope.names:
                return scope.names[name]
            first = False
            scope = scope.parent
        return None


def _dotted(node: cst.BaseExpression) -> str | None:
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


@dataclass
class ImportTable:
    module: Scope
    # scope of each FunctionDef / ClassDef node, by id
    scopes: dict[int, Scope]
    bindings: list[Binding]
    star_modules: list[str]

    @property
    def bound_names(self) -> frozenset[str]:
        return frozenset(b.name for b in self.bindings)


def _bind_import(
    node: cst.Import | cst.ImportFrom,
    scope: Scope,
    table: ImportTable,
    line: cst.SimpleStatementLine | cst.SimpleStatementSuite,
) -> None:
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = _dotted(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                name, qname = alias.asname.name.value, full
            else:
                name = qname = full.split(".")[0]
            binding = Binding(name, qname, node, alias, scope, line)
            scope.names[name] = binding
            table.bindings.append(binding)
        return
    if node.relative or node.module is None:
        return  # relative imports name the project's own modules
    module = _dotted(node.module)
    if module is None:
        return
    if isinstance(node.names, cst.ImportStar):
        table.star_modules.append(module)
        return
    for alias in node.names:
        if not isinstance(alias.name, cst.Name):
            continue
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            name = alias.asname.name.value
        else:
            name = alias.name.value
        binding = Binding(name, f"{module}.{alias.name.value}", node, alias, scope, line)
        scope.names[name] = binding
        table.bindings.append(binding)


def _params(params: cst.Parameters) -> list[str]:
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.append(star.name.value)
    return names


def _walk(body, scope: Scope, table: ImportTable) -> None:
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    _bind_import(small, scope, table, stmt)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            inner = Scope("function" if isinstance(stmt, cst.FunctionDef) else "class", scope)
            if isinstance(stmt, cst.FunctionDef):
                for name in _params(stmt.params):
                    inner.names[name] = None
            table.scopes[id(stmt)] = inner
            _walk_block(stmt.body, inner, table)
        else:
            for block in _blocks(stmt):
                _walk_block(block, scope, table)


def _walk_block(block, scope: Scope, table: ImportTable) -> None:
    if isinstance(block, cst.SimpleStatementSuite):
        for small in block.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                _bind_import(small, scope, table, block)
    else:
        _walk(block.body, scope, table)


def _blocks(stmt: cst.BaseCompoundStatement):
    """The blocks of a compound statement other than def/class (if, try, for, while, with, match)."""
    body = getattr(stmt, "body", None)
    if isinstance(body, cst.BaseSuite):
        yield body
    for name in ("orelse", "finalbody"):
        part = getattr(stmt, name, None)
        while part is not None:
            if isinstance(part, cst.If):  # elif chain
                yield part.body
                part = part.orelse
                continue
            yield part.body
            break
    for handler in getattr(stmt, "handlers", ()):
        yield handler.body
    for case in getattr(stmt, "cases", ()):
        yield case.body


def collect_imports(module: cst.Module) -> ImportTable:
    root = Scope("module", None)
    table = ImportTable(module=root, scopes={}, bindings=[], star_modules=[])
    _walk(module.body, root, table)
    return table


dotted_name = _dotted
