"""NM206 compile-backend: a `torch.compile` whose backend or mode the target does not want."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context, keyword_arg, string_value


def backend_differs(node: cst.CSTNode, ctx: Context) -> bool:
    """An explicit backend other than the target's, or a mode other than "default" (a mode that
    is not a literal counts too: it may be anything at run time)."""
    if not isinstance(node, cst.Call):
        return False
    backend = keyword_arg(node, "backend")
    if backend is not None and string_value(backend.value) != ctx.target.compile_backend:
        return True
    mode = keyword_arg(node, "mode")
    return mode is not None and string_value(mode.value) != "default"
