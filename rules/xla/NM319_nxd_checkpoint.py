"""NM319 nxd-checkpoint: NxD's save_checkpoint / load_checkpoint / has_checkpoint /
finalize_checkpoint and parallel_layers.checkpointing.save / load become the functions of the same
name in parallel_mesh.py, written with torch.distributed.checkpoint (DCP)."""

from __future__ import annotations

import libcst as cst

from .nxd import support

SAVE = ("checkpoint_dir_str", "tag", "model", "optimizer", "scheduler", "user_content")
LOAD = ("path", "tag", "model", "optimizer", "scheduler")
# performance and format switches of NxD's writer that DCP does not need
DROPPED = {"num_workers", "use_xser", "async_save"}
NEUTRAL = {
    "zero1_optimizer": "False",
    "use_zero1_dcp": "False",
    "avoid_saving_lower_precision_weights": "False",
}

# parallel_layers.checkpointing.save / load: a state dict file per TP rank
SAVE_DICT = (
    "checkpoint",
    "output_dir",
    "save_serially",
    "save_xser",
    "down_cast_bf16",
    "master_dp_only",
)
LOAD_DICT = (
    "chkpt_path",
    "model",
    "model_or_optimizer",
    "model_key",
    "load_xser",
    "sharded",
    "strict",
    "master_dp_only",
    "weights_only",
)
# how NxD wrote or read the files (serially, XLA serialisation, tensors only), not what
DICT_DROPPED = {
    "save_serially",
    "save_xser",
    "load_xser",
    "weights_only",
    "master_dp_only",
    "sharded",
}
# a checkpoint per data-parallel rank, or one that is not sharded, is another format
DICT_NEUTRAL = {"master_dp_only": "True", "sharded": "True"}


class Checkpoint(support.NxdRule):
    NAMES = support.CHECKPOINT

    def rewrite(self, node: cst.Call, qname: str):
        short = qname.rsplit(".", 1)[1]
        if short in ("save", "load"):
            return self._state_dict_file(node, short)
        if short in ("has_checkpoint", "finalize_checkpoint"):
            params = ("checkpoint_dir_str",) if short == "has_checkpoint" else ()
            call = support.Call(node, self.ctx.code, params)
            if call.problem or len(call.args) != len(params):
                return call.problem or "its arguments are not NxD's"
            return self.fix(node.func, f"{support.MESH}.{short}", [support.MESH_IMPORT])
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
        keep = names + (("strict",) if short == "load_checkpoint" else ("num_kept_ckpts",))
        return self._mesh_call(node, short, params, NEUTRAL, keep)

    def _state_dict_file(self, node: cst.Call, short: str):
        """parallel_layers.checkpointing.save(checkpoint, output_dir, ...) / load(chkpt_path,
        model, ...): the functions of the same name in parallel_mesh, written with DCP."""
        params = SAVE_DICT if short == "save" else LOAD_DICT
        keep = tuple(name for name in params if name not in DICT_DROPPED)
        return self._mesh_call(node, short, params, DICT_NEUTRAL, keep)

    def _mesh_call(self, node: cst.Call, short: str, params, neutral: dict, keep):
        """The call as parallel_mesh's function of the same name with the `keep` arguments,
        when every other argument has its `neutral` value (else why it stays manual)."""
        call = support.Call(node, self.ctx.code, params)
        if call.problem:
            return call.problem
        for name, value in neutral.items():
            if call.args.get(name, value) != value:
                return f"`{name}={call.args[name]}` is not written for you"
        code = support.call_code(f"{support.MESH}.{short}", call, keep, positional=2)
        return self.fix(node, code, [support.MESH_IMPORT])
