"""NM313 neuronx-distributed: every NeuronX Distributed use that NM314-NM319 do not migrate."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import libcst as cst


def _support():
    name = "neuron_migrate_rules.xla.nxd_support"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).parent / "nxd" / "support.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


support = _support()


def left_manual(node: cst.CSTNode, ctx) -> bool:
    """Not one of the names another NxD rule reports."""
    qname = ctx.qname(node)
    return qname is None or not support.covered(qname)
