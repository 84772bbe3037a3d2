"""NM604 other-xla-api: `xm.RateTracker()`, the throughput counter of XLA-era training loops,
becomes `RateTracker()`, a small class the fix writes once below the module's imports (same
`add(count)`, `rate()`, `global_rate()`); every other torch_xla name stays a manual finding."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule

RATE_TRACKER = "torch_xla.core.xla_model.RateTracker"
HELPER = "RateTracker"
HELPER_CODE = f'''
class {HELPER}:
    """Samples per second, as torch_xla's xm.RateTracker reported them: `rate()` since the
    previous call (smoothed), `global_rate()` since the tracker was made."""

    def __init__(self, smooth_factor=0.4):
        self.smooth_factor = smooth_factor
        self.start = self.last = time.time()
        self.total = self.pending = 0.0
        self.smoothed = None

    def add(self, count):
        self.pending += count
        self.total += count

    def rate(self):
        now = time.time()
        elapsed, self.last = now - self.last, now
        current = self.pending / elapsed if elapsed > 0 else 0.0
        self.pending = 0.0
        if self.smoothed is not None:
            current = (1 - self.smooth_factor) * current + self.smooth_factor * self.smoothed
        self.smoothed = current
        return current

    def global_rate(self):
        elapsed = time.time() - self.start
        return self.total / elapsed if elapsed > 0 else 0.0
'''
LEGACY = ("torch_xla", "torch_neuronx")


class RateTrackers(CodeRule):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.calls: list[tuple[cst.Call, tuple[int, ...]]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qname(node.func) == RATE_TRACKER:
            self.calls.append((node, self.ctx.statements))

    def leave_Module(self, node: cst.Module) -> None:
        if not self.calls:
            return
        anchor = self.ctx.helper_anchor(HELPER, leaving=LEGACY)
        for index, (call, statements) in enumerate(self.calls):
            if anchor is None:
                self.report(call.func, case="rate-tracker-manual", statements=statements)
                continue
            edits = [self.ctx.replace(call.func, HELPER)]
            if index == 0:
                edits.append(self.ctx.insert_after(anchor.body[-1], HELPER_CODE, ("import time",)))
                statements = (*statements, id(anchor))
            self.report(call.func, case="rate-tracker", edits=edits, statements=statements)
