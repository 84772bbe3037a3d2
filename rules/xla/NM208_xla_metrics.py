"""NM208 xla-metrics: a statement that only prints or logs PyTorch/XLA's metrics is removed.

`print(met.metrics_report())`, `logger.info("compiles: %s", met.counter_value("CompileTime"))`,
`print("compilations:", met.metric_data("CompileTime")[0])`: the numbers exist only in the XLA
runtime, and the statement's only effect is to show them. Any other use (a value kept in a
variable, a condition) stays a manual finding from the data pattern.
"""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule

_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "critical", "log", "exception"}


def _is_output_call(call: cst.Call) -> bool:
    """`print(...)`, `logger.info(...)`, `logging.warning(...)`, `tqdm.write(...)`."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value == "print"
    return isinstance(func, cst.Attribute) and (
        func.attr.value in _LOG_METHODS or func.attr.value == "write"
    )


class _MetricsCalls(cst.CSTVisitor):
    def __init__(self, ctx, names) -> None:
        super().__init__()
        self.ctx = ctx
        self.names = names
        self.found: list[cst.CSTNode] = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        qname = self.ctx.qname(node)
        if qname is not None and any(qname.startswith(n) for n in self.names):
            self.found.append(node)
            return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        qname = self.ctx.qname(node)
        if qname is not None and any(qname.startswith(n) for n in self.names):
            self.found.append(node)


class PrintedMetrics(CodeRule):
    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if not isinstance(call, cst.Call) or not _is_output_call(call):
            return
        prefixes = tuple(n.rstrip("*") for n in self.pattern("printed").names)
        finder = _MetricsCalls(self.ctx, prefixes)
        for arg in call.args:
            arg.visit(finder)
        if not finder.found:
            return
        self.report(
            finder.found[0],
            case="printed",
            edits=[self.ctx.remove_statement(node)],
            variables={"name": self.ctx.code(finder.found[0])},
        )
