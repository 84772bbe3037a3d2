"""NM315 nxd-parallel-state: NxD's parallel_state becomes a DeviceMesh ("dp", "tp") held by the
companion module parallel_mesh.py; size, rank and group queries become mesh queries."""

from __future__ import annotations

import libcst as cst

from .nxd import support

M = support.MESH
INIT = (
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "context_parallel_size",
    "expert_model_parallel_size",
    "skip_collective_init",
    "lnc_size",
    "mesh_only",
)
# the other dimensions must stay 1: pipeline, context and expert parallelism stay manual (NM313)
ONE = ("pipeline_model_parallel_size", "context_parallel_size", "expert_model_parallel_size")
QUERIES = {
    "model_parallel_is_initialized": f"{M}.is_initialized()",
    "destroy_model_parallel": f"{M}.destroy()",
    "get_tensor_model_parallel_size": f"{M}.tp_mesh().size()",
    "get_tensor_model_parallel_rank": f"{M}.tp_mesh().get_local_rank()",
    "get_tensor_model_parallel_group": f"{M}.tp_mesh().get_group()",
    "get_data_parallel_size": f"{M}.dp_mesh().size()",
    "get_data_parallel_rank": f"{M}.dp_mesh().get_local_rank()",
    "get_data_parallel_group": f"{M}.dp_mesh().get_group()",
    "get_world_group": "torch.distributed.group.WORLD",
}
# pipeline, context and expert parallelism: NxD answered size 1 and rank 0 when they were not set,
# which is the only case the mesh is written for (initialize_model_parallel with another size stays
# manual); the companion answers from the mesh when the user adds such a dimension
for _dim, _nxd in (("pp", "pipeline"), ("cp", "context"), ("ep", "expert")):
    QUERIES[f"get_{_nxd}_model_parallel_size"] = f'{M}.dim_size("{_dim}")'
    QUERIES[f"get_{_nxd}_model_parallel_rank"] = f'{M}.dim_rank("{_dim}")'


class ParallelState(support.NxdRule):
    NAMES = support.STATE

    def rewrite(self, node: cst.Call, qname: str):
        short = qname.rsplit(".", 1)[1]
        imports = [support.MESH_IMPORT, "import torch"]
        if short == "divide":
            call = support.Call(node, self.ctx.code, ("numerator", "denominator"))
            if call.problem or len(call.args) != 2:
                return call.problem or "it does not pass exactly a numerator and a denominator"
            return self.fix(node.func, f"{M}.divide", imports)
        if short == "rmsg":
            return support.same_signature(self, node, short)
        if short == "initialize_model_parallel":
            call = support.Call(node, self.ctx.code, INIT)
            if call.problem:
                return call.problem
            for name in ONE:
                if call.args.get(name, "1") != "1":
                    return f"`{name}={call.args[name]}`: pipeline, context and expert parallelism are not written for you (torch.distributed.pipelining, context_parallel)"
            for name in ("skip_collective_init", "mesh_only"):
                if call.args.get(name, "False") != "False":
                    return f"`{name}=` has no DeviceMesh equivalent"
            size = call.args.get("tensor_model_parallel_size", "1")
            device = self.ctx.target.device
            return self.fix(
                node, f'{M}.init_mesh("{device}", tensor_parallel_size={size})', imports
            )
        if node.args:
            if (
                short.endswith("_group")
                and len(node.args) == 1
                and self.ctx.code(node.args[0].value) == "False"
            ):
                pass
            else:
                return "its arguments (`as_list=True` gives XLA replica groups) have no mesh equivalent"
        return self.fix(node, QUERIES[short], imports)
