"""The edits a rule can ask for. Each is small and pure: CST in, CST out.

Expression actions return the new expression. Statement actions return a list of statements
that take the place of the matched one (`KEEP` stands for the original line); an empty list
removes it. An action that cannot be done safely raises Decline and the node stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import libcst as cst

KEEP = object()


class Decline(Exception):
    """This edit would not be safe here; leave the node alone."""


def render(template: str, variables: dict[str, str]) -> str:
    try:
        return template.format_map(variables)
    except (KeyError, IndexError) as exc:
        raise Decline(f"template needs {exc}") from None


def _parse_expression(code: str) -> cst.BaseExpression:
    try:
        return cst.parse_expression(code).visit(_StarredTuples())
    except cst.ParserSyntaxError as exc:
        raise Decline(f"template gave invalid code: {code!r}") from exc


def _statements(code: str) -> list[cst.BaseStatement]:
    try:
        return list(cst.parse_module(code).visit(_StarredTuples()).body)
    except cst.ParserSyntaxError as exc:
        raise Decline(f"template gave invalid code: {code!r}") from exc


class _StarredTuples(cst.CSTTransformer):
    """`f(a, *(b, c))` -> `f(a, b, c)` and `f(a, *())` -> `f(a)`: a template that unpacks the
    arguments it was given writes them out (same call, readable)."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not any(a.star == "*" and isinstance(a.value, cst.Tuple) for a in updated.args):
            return updated
        args: list[cst.Arg] = []
        for arg in updated.args:
            if arg.star == "*" and isinstance(arg.value, cst.Tuple):
                if not all(isinstance(e, cst.Element) for e in arg.value.elements):
                    return updated  # `*(a, *rest)`
                args += [cst.Arg(value=e.value) for e in arg.value.elements]
            else:
                args.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        spaced = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args = [a.with_changes(comma=spaced) for a in args[:-1]] + args[-1:]
        return updated.with_changes(args=args)


def quotes_for_fstring(node: cst.FormattedString) -> cst.FormattedString:
    """Strings inside an f-string's replacement fields that use the f-string's own quote
    (a template wrote `"RANK"` into `f"rank {...}"`) take the other quote: before Python 3.12
    the same quote ends the f-string."""
    quote = node.end[0] if node.end else '"'
    other = "'" if quote == '"' else '"'

    class Swap(cst.CSTTransformer):
        def leave_SimpleString(self, original, updated):
            value = updated.value
            at = len(updated.prefix)
            if value[at : at + 1] != quote or value[at : at + 3] == quote * 3:
                return updated
            body = value[at + 1 : -1]
            if other in body or "\\" in body:
                return updated
            return updated.with_changes(value=f"{updated.prefix}{other}{body}{other}")

    if quote * 3 == node.end:
        return node
    parts = [
        part.with_changes(expression=part.expression.visit(Swap()))
        if isinstance(part, cst.FormattedStringExpression)
        else part
        for part in node.parts
    ]
    return node.with_changes(parts=parts)


# ---- expressions ----------------------------------------------------------------------------


def replace_expression(node: cst.BaseExpression, params: dict, variables: dict) -> cst.CSTNode:
    new = _parse_expression(render(params["template"], variables))
    if isinstance(node, cst.Arg):
        # a keyword argument keeps its place and gets a new value
        return node.with_changes(value=new)
    if getattr(node, "lpar", None) and hasattr(new, "lpar"):
        new = new.with_changes(lpar=node.lpar, rpar=node.rpar)
    return new


def _keyword_arg(name: str, code: str, variables: dict) -> cst.Arg:
    return cst.Arg(
        value=_parse_expression(render(code, variables)),
        keyword=cst.Name(name),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )


def _append(args: list[cst.Arg], new: cst.Arg) -> list[cst.Arg]:
    """Add an argument at the end in the call's own style (one line, or one per line)."""
    if not args:
        return [new]
    last = args[-1]
    trailing = last.comma if isinstance(last.comma, cst.Comma) else None
    separator = (
        args[-2].comma
        if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma)
        else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    )
    if trailing is None:
        return [*args[:-1], last.with_changes(comma=separator), new]
    return [*args[:-1], last.with_changes(comma=separator), new.with_changes(comma=trailing)]


def _drop(args: list[cst.Arg], index: int) -> list[cst.Arg]:
    dropped = args[index]
    rest = args[:index] + args[index + 1 :]
    if index == len(args) - 1 and rest:
        # the new last argument takes the dropped one's ending (trailing comma or none)
        # and the line break before `)`
        rest[-1] = rest[-1].with_changes(
            comma=dropped.comma, whitespace_after_arg=dropped.whitespace_after_arg
        )
    return rest


def rewrite_call(node: cst.Call, params: dict, variables: dict) -> cst.CSTNode:
    if not isinstance(node, cst.Call):
        raise Decline("not a call")
    args = list(node.args)

    def find(name: str) -> int | None:
        for i, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == name:
                return i
        return None

    for old, new in params.get("rename-keywords", {}).items():
        i = find(old)
        if i is not None:
            if find(new) is not None:
                raise Decline(f"both {old}= and {new}= given")
            args[i] = args[i].with_changes(keyword=cst.Name(new))
    for name in params.get("drop-keywords", []):
        i = find(name)
        if i is not None:
            args = _drop(args, i)
    from neuron_migrate.engine.coderule import string_value

    for name, values in params.get("drop-keyword-values", {}).items():
        i = find(name)
        if i is not None and string_value(args[i].value) in values:
            args = _drop(args, i)
    for index, code in params.get("set-args", {}).items():
        positional = [i for i, a in enumerate(args) if a.keyword is None and not a.star]
        if int(index) >= len(positional):
            raise Decline(f"no positional argument {index}")
        at = positional[int(index)]
        args[at] = args[at].with_changes(value=_parse_expression(render(code, variables)))
    for name, code in params.get("set-keywords", {}).items():
        i = find(name)
        if i is not None:
            value = _parse_expression(render(code, variables))
            args[i] = args[i].with_changes(value=value)
        else:
            args = _append(args, _keyword_arg(name, code, variables))
    for name, code in params.get("default-keywords", {}).items():
        if find(name) is None:
            args = _append(args, _keyword_arg(name, code, variables))
    changes: dict[str, Any] = {"args": args}
    if "func" in params:
        changes["func"] = _parse_expression(render(params["func"], variables))
    new = node.with_changes(**changes)
    if "wrap" in params:
        # e.g. "{call}.to({device})": the rewritten call inside a larger expression
        call_code = cst.Module(body=[]).code_for_node(new.with_changes(lpar=[], rpar=[]))
        new = _parse_expression(render(params["wrap"], {**variables, "call": call_code}))
    return new


def replace_device_string(node: cst.SimpleString, params: dict, variables: dict) -> cst.CSTNode:
    from neuron_migrate.engine.coderule import string_value

    value = string_value(node)
    if value is None:
        raise Decline("not a plain string")
    _, sep, index = value.partition(":")
    quote_at = len(node.prefix)
    quote = node.value[
        quote_at : quote_at + (3 if node.value[quote_at : quote_at + 3] in ('"""', "'''") else 1)
    ]
    new_value = variables["device_name"] + sep + index
    return node.with_changes(value=f"{node.prefix}{quote}{new_value}{quote}")


# ---- statements -----------------------------------------------------------------------------


def remove_statement(node: cst.CSTNode, params: dict, variables: dict) -> list:
    return []


def render_block(template: str, variables: dict[str, str]) -> str:
    """Render statement templates line by line: a value that spans lines (a call's argument
    written over several lines) placed on an indented template line gets that indentation on
    its continuation lines too, so it keeps its shape inside the new block."""
    lines = []
    for line in template.split("\n"):
        indent = line[: len(line) - len(line.lstrip(" "))]
        values = variables
        if indent and "{" in line:
            values = _Shifted(variables, indent)
        lines.append(render(line, values))
    return "\n".join(lines)


class _Shifted(dict):
    def __init__(self, variables: dict[str, str], indent: str) -> None:
        super().__init__(variables)
        self.indent = indent

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key).replace("\n", "\n" + self.indent)


def replace_statement(node: cst.CSTNode, params: dict, variables: dict) -> list:
    code = render_block(params["template"], variables).strip()
    return _statements(code + "\n") if code else []


def insert_after(node: cst.CSTNode, params: dict, variables: dict) -> list:
    new = _statements(render_block(params["template"], variables).strip() + "\n")
    # an inserted class or function is set off by two blank lines, as PEP 8 has it
    new = [
        statement.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        if isinstance(statement, (cst.ClassDef, cst.FunctionDef)) and not statement.leading_lines
        else statement
        for statement in new
    ]
    return [KEEP, *new]


def prepend_to_body(node: cst.CSTNode, params: dict, variables: dict):
    """Add a statement at the top of a compound statement's block (a `for` loop's body)."""
    body = getattr(node, "body", None)
    if not isinstance(body, cst.IndentedBlock):
        raise Decline("the loop body is on the same line")
    new = _statements(render(params["template"], variables).strip() + "\n")
    return node.with_changes(body=body.with_changes(body=[*new, *body.body]))


def unwrap_with(node: cst.With, params: dict, variables: dict) -> list:
    if not isinstance(node, cst.With):
        raise Decline("not a with statement")
    index = int(variables.get("item", "0"))
    if len(node.items) > 1:
        items = [item for i, item in enumerate(node.items) if i != index]
        items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return [node.with_changes(items=items)]
    body = node.body
    if isinstance(body, cst.SimpleStatementSuite):
        statements: list[cst.BaseStatement] = [
            cst.SimpleStatementLine(body=[s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
            for s in body.body
        ]
        statements[0] = statements[0].with_changes(leading_lines=node.leading_lines)
        return statements
    statements = list(body.body)
    if statements:
        # the lines above `with` (comments, blank lines) stay above its first statement
        statements[0] = statements[0].with_changes(
            leading_lines=[*node.leading_lines, *statements[0].leading_lines]
        )
    header = body.header
    if header.comment is not None and statements:
        # `with torch_xla.step():  # comment` keeps its comment above the first statement
        comment_line = cst.EmptyLine(comment=header.comment)
        statements[0] = statements[0].with_changes(
            leading_lines=[comment_line, *statements[0].leading_lines]
        )
    if body.footer and statements:
        statements.append(FooterCarrier(body.footer))
    return statements


class FooterCarrier:
    """Comment lines that closed the unwrapped block: they go before the next statement."""

    def __init__(self, lines):
        self.lines = list(lines)


def remove_import_names(node: cst.Import | cst.ImportFrom, names: set[str]) -> cst.CSTNode | None:
    """The import without the aliases that bind `names`; None when nothing is left."""
    if isinstance(node.names, cst.ImportStar):
        return node
    kept = []
    for alias in node.names:
        bound = alias.evaluated_alias or alias.evaluated_name
        if isinstance(node, cst.Import) and alias.asname is None:
            bound = alias.evaluated_name.split(".")[0]
        if bound not in names:
            kept.append(alias)
    if not kept:
        return None
    if len(kept) == len(node.names):
        return node
    if not (isinstance(node, cst.ImportFrom) and node.lpar):
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(names=kept)


def remove_import(node: cst.CSTNode, params: dict, variables: dict):
    """Drop the aliases named in params["names"]; the statement goes when none is left."""
    result = remove_import_names(node, set(params["names"]))
    return [] if result is None else result


ExpressionAction = Callable[[Any, dict, dict], cst.CSTNode]
StatementAction = Callable[[Any, dict, dict], list]

EXPRESSION_ACTIONS: dict[str, ExpressionAction] = {
    "replace-expression": replace_expression,
    "rewrite-call": rewrite_call,
    "replace-device-string": replace_device_string,
}
STATEMENT_ACTIONS: dict[str, StatementAction] = {
    "remove-statement": remove_statement,
    "replace-statement": replace_statement,
    "insert-after": insert_after,
    "unwrap-with": unwrap_with,
    "remove-import": remove_import,
    "prepend-to-body": prepend_to_body,
}
