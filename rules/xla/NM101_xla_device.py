"""NM101 xla-device: which calls of the XLA device factory are just a device index."""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import Context

# literals that cannot be a device index: a fix must not write `torch.device("neuron", "foo")`
# (nor turn such a call into a working device as if it were one)
_NOT_AN_INDEX = (
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.Float,
    cst.Imaginary,
    cst.List,
    cst.Tuple,
    cst.Set,
    cst.Dict,
    cst.Lambda,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)


def single_index_argument(node: cst.CSTNode, ctx: Context) -> bool:
    """`xla_device(1)`, `xla_device(n=1)`, `torch_xla.device(index=1)`: one argument, the index
    (a name or an integer expression, never a string, float or container literal)."""
    if not isinstance(node, cst.Call) or len(node.args) != 1:
        return False
    arg = node.args[0]
    if arg.star or isinstance(arg.value, _NOT_AN_INDEX):
        return False
    if isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False"):
        return False
    return arg.keyword is None or arg.keyword.value in ("n", "index")
