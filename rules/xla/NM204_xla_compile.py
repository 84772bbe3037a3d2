"""NM204 xla-compile: `@torch_xla.compile` used bare as a decorator."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context


def is_decorator(node: cst.CSTNode, ctx: Context) -> bool:
    """The name is a decorator by itself (`@torch_xla.compile`)."""
    return ctx.where(node)[0] == "decorator"
