"""NMC105 cudnn-settings: an assignment to a cuDNN / CUDA backend flag is removed; any other use
of one is reported for a manual decision."""

from __future__ import annotations

import re

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule

# torch.backends.cudnn.benchmark, torch.backends.cuda.matmul.allow_tf32, ...; a flag is the
# whole chain, never one of its prefixes (`torch.backends.cuda.matmul`)
_FLAG = re.compile(r"^torch\.backends\.(?:cudnn|cuda)(?:\.\w+)+$")


def _flag(ctx, node: cst.BaseExpression) -> bool:
    qname = ctx.qname(node)
    return qname is not None and _FLAG.match(qname) is not None


class CudnnSettings(CodeRule):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.seen: set[int] = set()  # chains already reported (and their inner parts)

    def _mark(self, node: cst.BaseExpression) -> None:
        while isinstance(node, cst.Attribute):
            self.seen.add(id(node))
            node = node.value

    def visit_Assign(self, node: cst.Assign) -> None:
        targets = [t.target for t in node.targets]
        if not all(isinstance(t, cst.Attribute) and _flag(self.ctx, t) for t in targets):
            return
        for target in targets:
            self._mark(target)
        edit = self.ctx.remove_statement(node)
        first = targets[0]
        self.report(
            first, case="assignment", edits=[edit], variables={"name": self.ctx.code(first)}
        )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if id(node) in self.seen or not _flag(self.ctx, node):
            return
        self._mark(node)
        self.report(node, case="use", variables={"name": self.ctx.code(node)})
