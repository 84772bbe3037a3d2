"""NM313 neuronx-distributed: every NeuronX Distributed use that NM314-NM319 do not migrate."""

from __future__ import annotations

import libcst as cst

from .nxd import support


def left_manual(node: cst.CSTNode, ctx) -> bool:
    """Not one of the names another NxD rule reports."""
    qname = ctx.qname(node)
    return qname is None or not support.covered(qname)
