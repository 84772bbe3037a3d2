"""NM307 rendezvous: `xm.rendezvous(tag)` as a statement is a barrier.

On XLA it also worked in a run of one process, with no process group at all;
`dist.barrier()` raises there ("Default process group has not been initialized"). So the
barrier is written as `if dist.is_initialized(): dist.barrier()`, unless the walk proves a
process group is up: an earlier statement of an enclosing block of the same function (or of the
module) is `dist.init_process_group(...)`, and no `dist.destroy_process_group()` came after it.
Then it is the plain `dist.barrier()`.
"""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule, Context

NAMES = ("torch_xla.core.xla_model.rendezvous", "torch_xla.core.xla_model.xla_rendezvous")
INIT = "torch.distributed.init_process_group"
DESTROY = "torch.distributed.destroy_process_group"
IMPORTS = ("import torch.distributed as dist",)


def _only_the_wait(node: cst.Call, ctx: Context) -> bool:
    """A statement with one plain argument (the tag): nothing is exchanged or kept."""
    args = node.args
    return (
        ctx.where(node)[0] == "statement"
        and len(args) == 1
        and args[0].keyword is None
        and not args[0].star
    )


def exchanges_data(node: cst.CSTNode, ctx: Context) -> bool:
    """The manual pattern: a payload, other replicas, or a result that is used."""
    return not (isinstance(node, cst.Call) and _only_the_wait(node, ctx))


class Barriers(CodeRule):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        # per function (the module first): per enclosing block, has an earlier statement of
        # it started the process group?
        self.frames: list[list[bool]] = [[False]]
        self.line: cst.SimpleStatementLine | None = None

    def applies(self) -> bool:
        return self.ctx.imports_module("torch_xla")

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frames.append([])

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frames.pop()

    visit_ClassDef = visit_FunctionDef
    leave_ClassDef = leave_FunctionDef

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.frames[-1].append(False)

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.frames[-1].pop()

    def leave_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.line = None

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.line = node
        for small in node.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                qname = self.ctx.qname(small.value.func)
                if qname == INIT and self.frames[-1]:
                    self.frames[-1][-1] = True

    def visit_Call(self, node: cst.Call) -> None:
        qname = self.ctx.qname(node.func)
        if qname == DESTROY:
            for frame in self.frames:
                frame[:] = [False] * len(frame)
            return
        if qname not in NAMES or not _only_the_wait(node, self.ctx):
            return
        statement = self.ctx.where(node)[1]
        if any(self.frames[-1]):
            self.report(
                node,
                case="barrier",
                edits=[self.ctx.replace_statement(statement, "dist.barrier()", IMPORTS)],
            )
            return
        code = "if dist.is_initialized():\n    dist.barrier()"
        if self.line is None or list(self.line.body) != [statement]:
            # `if ready: xm.rendezvous(t)`, `x = 1; xm.rendezvous(t)`: one line it stays
            code = "dist.barrier() if dist.is_initialized() else None"
        self.report(
            node,
            case="guarded-barrier",
            edits=[self.ctx.replace_statement(statement, code, IMPORTS)],
        )
