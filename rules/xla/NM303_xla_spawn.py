"""NM303 xla-spawn: the spawn is rewritten only where the script starts its processes."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context


def in_main_guard(node: cst.CSTNode, ctx: Context) -> bool:
    """Inside `if __name__ == "__main__":`."""
    return ctx.in_main_guard
