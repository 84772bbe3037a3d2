"""NM303 xla-spawn: the spawn is rewritten only where the script starts its processes."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context


def in_main_guard(node: cst.CSTNode, ctx: Context) -> bool:
    """Inside `if __name__ == "__main__":`."""
    return ctx.in_main_guard


PROCESS_GROUP_INIT = "torch.distributed.init_process_group"


def in_main_guard_without_process_group(node: cst.CSTNode, ctx: Context) -> bool:
    """Inside the main guard of a program that never starts a process group itself: XLA's
    collectives needed none, torch.distributed's do (init it before calling the entry)."""
    return ctx.in_main_guard and PROCESS_GROUP_INIT not in ctx.called
