"""What a fix writes is tidy and parses on every supported Python (issue 12, item 8)."""

from __future__ import annotations

import ast

from tests.conftest import fixed


def test_template_quotes_inside_an_fstring_use_the_other_quote():
    out = fixed(
        """
        import torch_xla.core.xla_model as xm
        print(f"rank {xm.get_ordinal()}: ok")
        print(f'rank {xm.get_ordinal()}: ok')
        """
    )
    assert "print(f\"rank {int(os.environ.get('RANK', 0))}: ok\")" in out
    assert "print(f'rank {int(os.environ.get(\"RANK\", 0))}: ok')" in out
    ast.parse(out, feature_version=(3, 10))


def test_unpacked_argument_tuples_are_written_out():
    out = fixed(
        """
        import torch_xla.distributed.xla_multiprocessing as xmp
        import torch_xla.core.xla_model as xm

        xm.add_step_closure(report, args=(loss, step))
        if __name__ == "__main__":
            xmp.spawn(_mp_fn, args=(flags, 2))
        """,
        unsafe=True,
    )
    assert "report(loss, step)" in out
    assert '_mp_fn(int(os.environ.get("LOCAL_RANK", 0)), flags, 2)' in out
    assert "*(" not in out
