"""NM103 xla-device-queries: device counts have an exact answer only with one process per
device (torchrun, as `xmp.spawn` had); an SPMD program drives every device from one process."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context

SPMD_MODULES = ("torch_xla.distributed.spmd", "torch_xla.experimental.xla_sharding")


def process_per_device(node: cst.CSTNode, ctx: Context) -> bool:
    """The file does not use SPMD sharding."""
    return not ctx.imports_module(*SPMD_MODULES)
