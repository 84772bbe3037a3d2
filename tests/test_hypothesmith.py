"""Generated valid programs (hypothesmith) with legacy code mixed in: check never crashes, the
fixed output parses, and a second fix changes nothing."""

from __future__ import annotations

import ast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import run_code


def _programs():
    """Generated programs; hypothesmith is imported when a test draws one (building its
    grammar costs seconds, which the fast lane, collecting this module, need not pay)."""
    import hypothesmith

    return hypothesmith.from_grammar()


pytestmark = pytest.mark.slow  # generated programs (hypothesmith)

HEADER = "import torch\nimport torch_xla.core.xla_model as xm\n"
FOOTER = "\ndevice = xm.xla_device()\nxm.mark_step()\nx = torch.zeros(2).to('xla')\n"


def _valid(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.deferred(_programs))
def test_check_and_fix_on_generated_programs(program):
    source = HEADER + program + FOOTER
    if not _valid(source):
        return
    result = run_code(source, dedent=False)
    assert result.error is None, result.error
    fixed = run_code(source, dedent=False, fix=True, unsafe=True)
    assert fixed.error is None, fixed.error
    if fixed.fixed_source is not None:
        ast.parse(fixed.fixed_source)
        again = run_code(fixed.fixed_source, dedent=False, fix=True, unsafe=True)
        assert again.fixed_source is None
