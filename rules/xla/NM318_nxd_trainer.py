"""NM318 nxd-trainer: NxD's trainer setup written out natively: the configuration (and the
mesh), the model (its TP layers are sharded where they are built) wrapped by FSDP2 fully_shard on
the "dp" dimension, and the optimizer with NxD's gradient clipping before each step."""

from __future__ import annotations

import libcst as cst

from .nxd import support

M = support.MESH
CONFIG = (
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "expert_parallel_size",
    "context_parallel_size",
    "pipeline_config",
    "optimizer_config",
    "activation_checkpoint_config",
    "pad_model",
    "sequence_parallel",
    "model_init_config",
    "lora_config",
    "mixed_precision_config",
)
NEUTRAL = {
    "pipeline_parallel_size": "1",
    "expert_parallel_size": "1",
    "context_parallel_size": "1",
    "pipeline_config": "None",
    "activation_checkpoint_config": "None",
    "pad_model": "False",
    "model_init_config": "None",
    "lora_config": "None",
    "mixed_precision_config": "None",
}


class Trainer(support.NxdRule):
    NAMES = support.TRAINER

    def rewrite(self, node: cst.Call, qname: str):
        short = qname.rsplit(".", 1)[1]
        code = self.ctx.code
        if short == "neuronx_distributed_config":
            call = support.Call(node, code, CONFIG)
            if call.problem:
                return call.problem
            for name, value in NEUTRAL.items():
                if call.args.get(name, value) != value:
                    return f"`{name}={call.args[name]}` is not written for you (pipelining, activation checkpointing, LoRA, mixed precision: see explain)"
            args = [f'"{self.ctx.target.device}"'] + [
                f"{n}={call.args[n]}" for n in CONFIG if n in call.args and n not in NEUTRAL
            ]
            return self.fix(node, f"{M}.training_config({', '.join(args)})", [support.MESH_IMPORT])
        # the leading arguments by position; *args / **kwargs after them go on to the model
        # function or the optimizer class unchanged
        lead = []
        for arg in node.args:
            if arg.keyword is not None or arg.star:
                break
            lead.append(code(arg.value))
        rest = [
            f"{a.star}{code(a.value)}"
            if a.keyword is None
            else f"{a.keyword.value}={code(a.value)}"
            for a in node.args[len(lead) :]
            if not (a.keyword is not None and a.keyword.value == "include_buffers")
        ]
        if short == "initialize_parallel_model":
            if len(lead) < 2:
                return "the configuration and the model function are not both given by position"
            extra = lead[3:] + rest
            model = f"{lead[1]}({', '.join(extra)})"
            return self.fix(
                node,
                f"fully_shard({model}, mesh={M}.dp_mesh())",
                [support.MESH_IMPORT, "from torch.distributed.fsdp import fully_shard"],
            )
        if len(lead) < 3:
            return "the configuration, the optimizer class and the parameters are not all given by position"
        config, cls, params = lead[:3]
        optimizer = f"{cls}({', '.join([params, *lead[3:], *rest])})"
        return self.fix(
            node, f"{M}.clip_grad_norm_before_step({optimizer}, {config})", [support.MESH_IMPORT]
        )
