"""NM810 hf-async-load: model loads in a file that targets the neuron device, unless the file
already turns Transformers' asynchronous loading off. Decided once the whole file is read."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule, is_device_string, matches_name

SWITCH = "HF_DEACTIVATE_ASYNC_LOAD"
# a file importing these targets the neuron device once migrated
LEGACY_MODULES = ("torch_xla", "torch_neuronx")


class HfAsyncLoad(CodeRule):
    wants_strings = True

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.names = self.pattern("load").names
        self.loads: list[tuple[cst.Call, str, tuple[int, ...]]] = []

    def visit_Call(self, node: cst.Call) -> None:
        qname = self.ctx.qname(node.func)
        if qname is not None and matches_name(qname, self.names):
            self.loads.append((node, qname, self.ctx.statements))

    def _targets_neuron(self) -> bool:
        """A string literal "neuron" / "neuron:N" (`torch.device("neuron")`, `device_map=
        "neuron"`), or a legacy import when the migration target is neuron."""
        strings = self.ctx.strings
        if any(is_device_string(s, ("neuron",)) for s in strings):
            return True
        return self.ctx.target.device == "neuron" and self.ctx.imports_module(*LEGACY_MODULES)

    def leave_Module(self, node: cst.Module) -> None:
        if not self.loads or SWITCH in self.ctx.strings or not self._targets_neuron():
            return
        for call, qname, statements in self.loads:
            self.report(call, case="load", variables={"qname": qname}, statements=statements)
