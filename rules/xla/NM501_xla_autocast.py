"""NM501 xla-autocast: only the string "xla" as the first argument makes this call legacy."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context, is_device_string, string_value


def first_arg_is_xla(node: cst.CSTNode, ctx: Context) -> bool:
    """The first positional argument is "xla" or "xla:N"."""
    if not isinstance(node, cst.Call) or not node.args or node.args[0].keyword is not None:
        return False
    return is_device_string(string_value(node.args[0].value), ("xla",))
