"""NM319 nxd-checkpoint: NxD's save_checkpoint / load_checkpoint become the functions of the same
name in parallel_mesh.py, written with torch.distributed.checkpoint (DCP)."""

from __future__ import annotations

import libcst as cst

from .nxd import support

SAVE = ("checkpoint_dir_str", "tag", "model", "optimizer", "scheduler", "user_content")
LOAD = ("path", "tag", "model", "optimizer", "scheduler")
# performance and format switches of NxD's writer that DCP does not need
DROPPED = {"num_workers", "use_xser"}
NEUTRAL = {
    "async_save": "False",
    "num_kept_ckpts": "None",
    "zero1_optimizer": "False",
    "use_zero1_dcp": "False",
    "avoid_saving_lower_precision_weights": "False",
}


class Checkpoint(support.NxdRule):
    NAMES = support.CHECKPOINT

    def rewrite(self, node: cst.Call, qname: str):
        short = qname.rsplit(".", 1)[1]
        names = SAVE if short == "save_checkpoint" else LOAD
        extra = (
            "num_workers",
            "use_xser",
            "num_kept_ckpts",
            "async_save",
            "zero1_optimizer",
            "use_zero1_dcp",
            "avoid_saving_lower_precision_weights",
        )
        params = (
            (*SAVE, *extra)
            if short == "save_checkpoint"
            else (*LOAD, "num_workers", "strict", "use_zero1_dcp")
        )
        call = support.Call(node, self.ctx.code, params)
        if call.problem:
            return call.problem
        for name, value in NEUTRAL.items():
            if call.args.get(name, value) != value:
                return f"`{name}={call.args[name]}` is not written for you"
        keep = names + (("strict",) if short == "load_checkpoint" else ())
        code = support.call_code(f"{support.MESH}.{short}", call, keep, positional=2)
        return self.fix(node, code, [support.MESH_IMPORT])
