"""NM101 xla-device: which calls of the XLA device factory are just a device index."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context


def single_index_argument(node: cst.CSTNode, ctx: Context) -> bool:
    """`xla_device(1)`, `xla_device(n=1)`, `torch_xla.device(index=1)`: one argument, the index."""
    if not isinstance(node, cst.Call) or len(node.args) != 1:
        return False
    arg = node.args[0]
    if arg.star:
        return False
    return arg.keyword is None or arg.keyword.value in ("n", "index")
