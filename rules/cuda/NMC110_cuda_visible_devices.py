"""NMC110 cuda-visible-devices: the variable name "CUDA_VISIBLE_DEVICES" in code (set or read)
becomes "NEURON_RT_VISIBLE_CORES"."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule, string_value

_OLD, _NEW = "CUDA_VISIBLE_DEVICES", "NEURON_RT_VISIBLE_CORES"


class VisibleDevices(CodeRule):
    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if string_value(node) != _OLD:
            return
        edit = self.ctx.replace(node, node.value.replace(_OLD, _NEW))
        self.report(node, case="rename", edits=[edit], variables={"var": _OLD})
