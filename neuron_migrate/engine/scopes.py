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
    # the module the statement imports: `import optimum.neuron` binds `optimum` but imports
    # `optimum.neuron`
    imported: str = ""

    def __post_init__(self) -> None:
        self.imported = self.imported or self.qname


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
            binding = Binding(name, qname, node, alias, scope, line, imported=full)
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


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _assigned(small: cst.BaseSmallStatement) -> list[tuple[str, bool]]:
    """Names a small statement binds by assignment, each with whether it binds None (the
    `except ImportError: xm = None` fallback)."""
    if isinstance(small, cst.Assign):
        is_none = isinstance(small.value, cst.Name) and small.value.value == "None"
        return [(n, is_none) for t in small.targets for n in _target_names(t.target)]
    if isinstance(small, (cst.AnnAssign, cst.AugAssign)) and small.value is not None:
        return [(n, False) for n in _target_names(small.target)]
    return []


class _Walk:
    """One scope's walk: imports bind names; other bindings of the same names shadow them."""

    def __init__(self, scope: Scope, table: ImportTable):
        self.scope = scope
        self.table = table
        self.rebound: set[str] = set()

    def statements(self, body, in_except: bool = False) -> None:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                self.small(stmt.body, stmt, in_except)
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                self.rebound.add(stmt.name.value)
                inner = Scope(
                    "function" if isinstance(stmt, cst.FunctionDef) else "class", self.scope
                )
                if isinstance(stmt, cst.FunctionDef):
                    for name in _params(stmt.params):
                        inner.names[name] = None
                self.table.scopes[id(stmt)] = inner
                walk = _Walk(inner, self.table)
                walk.block(stmt.body, False)
                walk.finish()
            else:
                if isinstance(stmt, cst.For):
                    self.rebound.update(_target_names(stmt.target))
                elif isinstance(stmt, cst.With):
                    for item in stmt.items:
                        if item.asname is not None:
                            self.rebound.update(_target_names(item.asname.name))
                for block, handler in _blocks(stmt):
                    self.block(block, in_except or handler)

    def small(self, body, line, in_except: bool) -> None:
        for small in body:
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                _bind_import(small, self.scope, self.table, line)
                continue
            for name, is_none in _assigned(small):
                if not (is_none and in_except):
                    self.rebound.add(name)

    def block(self, block, in_except: bool) -> None:
        if isinstance(block, cst.SimpleStatementSuite):
            self.small(block.body, block, in_except)
        else:
            self.statements(block.body, in_except)

    def finish(self) -> None:
        """A name bound both by an import and by something else in the same scope is not
        resolved (which binding wins depends on the order the code runs in); in a function,
        an assigned name shadows the module's import."""
        for name in self.rebound:
            self.scope.names[name] = None


def _blocks(stmt: cst.BaseCompoundStatement):
    """(block, is an except handler) for each block of an if / try / for / while / with / match."""
    body = getattr(stmt, "body", None)
    if isinstance(body, cst.BaseSuite):
        yield body, False
    for name in ("orelse", "finalbody"):
        part = getattr(stmt, name, None)
        while part is not None:
            if isinstance(part, cst.If):  # elif chain
                yield part.body, False
                part = part.orelse
                continue
            yield part.body, False
            break
    for handler in getattr(stmt, "handlers", ()):
        yield handler.body, True
    for case in getattr(stmt, "cases", ()):
        yield case.body, False


def _strings(node: cst.CSTNode):
    """The string literals of an annotation, found without LibCST's `children` (it rebuilds
    the node) for the shapes annotations have: names, `X[...]`, `X | Y`."""
    kind = type(node)
    if kind is cst.SimpleString or kind is cst.ConcatenatedString:
        yield node
    elif kind is cst.Name or kind is cst.Attribute:
        return
    elif kind is cst.Subscript:
        yield from _strings(node.value)
        for element in node.slice:
            if type(element.slice) is cst.Index:
                yield from _strings(element.slice.value)
    elif kind is cst.BinaryOperation:
        yield from _strings(node.left)
        yield from _strings(node.right)
    else:
        for child in node.children:
            yield from _strings(child)


def annotation_strings(
    annotation: cst.Annotation,
) -> list[tuple[cst.BaseString, cst.BaseExpression]]:
    """The strings of a type annotation that are forward references (`"mod.Device"`,
    `List["Model"]`), each with the expression it holds: code, which reads names as any
    other code does (as pyflakes has it). A string that is not an expression is left out."""
    found = []
    for string in _strings(annotation.annotation):
        value = string.evaluated_value
        if not isinstance(value, str) or not value.strip():
            continue
        try:
            found.append((string, cst.parse_expression(value.strip())))
        except (cst.ParserSyntaxError, RecursionError):
            continue
    return found


def name_chains(expression: cst.CSTNode):
    """The outermost names and attribute chains on names in an expression (`a.b.c` once, not
    `a` and `a.b` again)."""
    head = expression
    while isinstance(head, cst.Attribute):
        head = head.value
    if isinstance(head, cst.Name):
        yield expression
        if expression is not head:
            return
    if isinstance(expression, cst.Name):
        return
    for child in expression.children:
        yield from name_chains(child)


def annotation_names(annotation: cst.Annotation) -> set[str]:
    """The names the string annotations of `annotation` read: `mod` of `"mod.Device"`."""
    names: set[str] = set()
    for _string, expression in annotation_strings(annotation):
        for chain in name_chains(expression):
            while isinstance(chain, cst.Attribute):
                chain = chain.value
            names.add(chain.value)
    return names


def collect_imports(module: cst.Module) -> ImportTable:
    root = Scope("module", None)
    table = ImportTable(module=root, scopes={}, bindings=[], star_modules=[])
    walk = _Walk(root, table)
    walk.statements(module.body)
    walk.finish()
    return table


dotted_name = _dotted


class LoadedNames(cst.CSTVisitor):
    """Every name the code reads (not import aliases, assignment targets or attribute names):
    what the fixer's import cleaning goes by, and so what an unused-import finding must."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self._skip: set[int] = set()

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._skip.add(id(node.attr))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self._skip.add(id(node.target))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self._skip:
            self.names.add(node.value)

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self.names |= annotation_names(node)
