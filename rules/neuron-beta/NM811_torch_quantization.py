"""NM811 torch-quantization: a quantized dtype that is compared is a question, not a use."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context


def not_compared(node: cst.CSTNode, ctx: Context) -> bool:
    """The expression is not a side of a comparison (`x.dtype == torch.qint8`)."""
    return not ctx.compared(node)
