"""NM904 launcher-script: XLA runtime variables (removed when their statement only sets such
variables), pre-compilation runs, precompiled exports, and XLA process spawning (by hand)."""

from __future__ import annotations

import fnmatch
import re

from neuron_migrate.checkers.project.api import (
    Assignment,
    Command,
    Context,
    Report,
    Safety,
    checks,
)

_PYTHON = re.compile(r"(^|/)python[0-9.]*$")
_OPTIONS_WITH_VALUE = ("-X", "-W")


def _named(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


@checks("env")
def check_variable(item: Assignment, ctx: Context) -> list[Report]:
    bf16 = ctx.case("bf16-variable").names
    xla = ctx.case("xla-variable").names + bf16
    if not _named(item.name, xla):
        return []
    case = "bf16-variable" if _named(item.name, bf16) else "xla-variable"
    if not item.removable:
        return [ctx.report(item, case, name=item.name)]
    if not item.statement:  # `VAR=value cmd`: the assignment goes by itself
        return [ctx.report(item, case, replacement="", name=item.name)]
    if not all(_named(n, xla) for n in item.statement):
        return [ctx.report(item, case, name=item.name)]
    # one edit removes the statement: as safe as its least safe variable
    weakest = Safety.UNSAFE if any(_named(n, bf16) for n in item.statement) else None
    return [ctx.report(item, case, replacement="", safety=weakest, name=item.name)]


def _xla_file(ctx: Context) -> tuple[bool, bool]:
    """(the file shows XLA signs, the file shows several processes), comments aside."""
    if "launcher-signs" not in ctx.memo:
        code = "\n".join(
            line for line in ctx.text.splitlines() if not line.lstrip().startswith("#")
        )
        case = ctx.case("spawning-script")
        ctx.memo["launcher-signs"] = (
            any(re.search(t, code) for t in case.triggers),
            any(re.search(n, code) for n in case.names),
        )
    return ctx.memo["launcher-signs"]


def _python(command: Command, ctx: Context) -> list[Report]:
    args = command.values[1:]
    j = 0
    while j < len(args) and args[j].startswith("-") and args[j] != "-m":
        j += 2 if args[j] in _OPTIONS_WITH_VALUE else 1
    if j >= len(args):
        return []
    if args[j] == "-m":
        module = args[j + 1] if j + 1 < len(args) else ""
        (launcher,) = ctx.case("xla-launcher").names
        if module.startswith(launcher.split()[-1]):
            return [ctx.report(command, "xla-launcher", module=module)]
        return []
    script = args[j]
    xla_file, several = _xla_file(ctx)
    case = ctx.case("spawning-script")
    if script.endswith(".py") and xla_file:
        if several or any(re.search(n, command.text) for n in case.names):
            return [ctx.report(command, case, script=script)]
    return []


@checks("command")
def check_command(command: Command, ctx: Context) -> list[Report]:
    out = []
    current: Command | None = command
    while current is not None:
        head = current.values[0]
        if head in ctx.case("precompile").names:
            out.append(ctx.report(current, "precompile", name=head))
            current = current.tail(1)  # the run it pre-compiles
            continue
        for name in ctx.case("precompiled-export").names:
            if current.starts_with(name):
                return [*out, ctx.report(current, "precompiled-export", name=name)]
        if _PYTHON.search(head):
            out += _python(current, ctx)
        break
    return out
