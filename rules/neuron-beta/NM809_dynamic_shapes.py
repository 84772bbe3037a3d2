"""NM809 dynamic-shapes: `padding=True` means longest-sequence padding only for tokenizers."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context


def imports_transformers(node: cst.CSTNode, ctx: Context) -> bool:
    """The file imports Hugging Face Transformers (whose tokenizers and collators take
    `padding=`)."""
    return ctx.imports_module("transformers")
