"""NM808 mxfp8: TorchAO on the neuron device is TorchAO Neuron's (`torchao-neuron`, Trn3, Neuron
2.34+); a project whose dependency files pin it is not reported (config/dependencies.py reads
them once per run into the setting `pinned:<package>`)."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context


def torchao_neuron_not_pinned(node: cst.CSTNode, ctx: Context) -> bool:
    """The project's requirements, pyproject.toml or setup.cfg do not list torchao-neuron."""
    return not ctx.setting("pinned:torchao-neuron")
