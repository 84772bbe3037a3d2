"""NM303 xla-spawn: the spawn is rewritten only where the script starts its processes: under
`if __name__ == "__main__":`, or in a module-level function that the main guard calls
(`def main(): xmp.spawn(...)`). Under torchrun that code runs once per process, so calling the
entry function there is what each spawned process did."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context, is_main_guard

PROCESS_GROUP_INIT = "torch.distributed.init_process_group"


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.names.add(node.func.value)


class _Contains(cst.CSTVisitor):
    def __init__(self, target: cst.CSTNode) -> None:
        super().__init__()
        self.target = target
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.target:
            self.found = True
        return not self.found


def _entry_functions(module: cst.Module) -> list[cst.FunctionDef]:
    """Module-level functions that the main guard calls by name."""
    calls = _Calls()
    for statement in module.body:
        if isinstance(statement, cst.If) and is_main_guard(statement.test):
            statement.visit(calls)
    return [
        s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value in calls.names
    ]


def starts_processes(node: cst.CSTNode, ctx: Context) -> bool:
    """Inside the main guard, or inside a module-level function the main guard calls."""
    if ctx.in_main_guard:
        return True
    for function in _entry_functions(ctx.module):
        finder = _Contains(node)
        function.visit(finder)
        if finder.found:
            return True
    return False


def starts_processes_without_process_group(node: cst.CSTNode, ctx: Context) -> bool:
    """Where the processes start, in a program that never starts a process group itself:
    XLA's collectives needed none, torch.distributed's do (init it before the entry)."""
    return PROCESS_GROUP_INIT not in ctx.called and starts_processes(node, ctx)
