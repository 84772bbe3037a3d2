"""NM316 nxd-mappings: NxD's mappings (copy / reduce / scatter / gather between the tensor- and
sequence-parallel regions) become the functions of the same name and arguments in the companion
module parallel_mesh.py, which runs the same collective forward and backward on the "tp" group."""

from __future__ import annotations

import libcst as cst

from .nxd import support


class Mappings(support.NxdRule):
    NAMES = support.MAPPINGS

    def rewrite(self, node: cst.Call, qname: str):
        short = qname.rsplit(".", 1)[1]
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in ("tile_cc", "dtype"):
                return f"`{arg.keyword.value}=` has no equivalent"
        return self.fix(node.func, f"{support.MESH}.{short}", [support.MESH_IMPORT])
