"""NMC124 mha-attn-mask: `nn.MultiheadAttention` called with an attention mask in a file that
trains (calls `.backward()` or uses `torch.optim`)."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule, matches_name

# MultiheadAttention.forward(query, key, value, key_padding_mask, need_weights, attn_mask, ...)
_ATTN_MASK_POSITION = 5


def _passes_mask(call: cst.Call, position: int) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "attn_mask":
            return not (isinstance(arg.value, cst.Name) and arg.value.value == "None")
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return len(positional) > position


class MhaAttnMask(CodeRule):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.modules: set[str] = set()  # `self.attn`, `mha`: names given a MultiheadAttention
        self.calls: list[tuple[cst.Call, str, tuple[int, ...]]] = []
        self.trains = False

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if not isinstance(value, cst.Call):
            return
        if matches_name(self.ctx.qname(value.func) or "", self.pattern().names):
            for target in node.targets:
                self.modules.add(self.ctx.code(target.target))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "backward":
            self.trains = True
        qname = self.ctx.qname(func) or ""
        if qname.startswith("torch.optim.") or qname == "torch.autograd.backward":
            self.trains = True
        if qname == "torch.nn.functional.multi_head_attention_forward":
            # (query, key, value, num_heads, in_proj_weight, ... ): attn_mask is a keyword here
            if _passes_mask(node, 99):
                self.calls.append((node, "function", self.ctx.statements))
            return
        if isinstance(func, (cst.Name, cst.Attribute)) and _passes_mask(node, _ATTN_MASK_POSITION):
            self.calls.append((node, self.ctx.code(func), self.ctx.statements))

    def leave_Module(self, node: cst.Module) -> None:
        if not self.trains:
            return
        for call, callee, statements in self.calls:
            if callee == "function" or callee in self.modules:
                self.report(
                    call,
                    case="masked",
                    statements=statements,
                    variables={"name": self.ctx.code(call.func)},
                )
