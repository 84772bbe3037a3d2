from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from neuron_migrate.api import check_text, enabled_rules
from neuron_migrate.checkers.base import Job, Options
from neuron_migrate.config.settings import Settings
from neuron_migrate.packs.loader import load_rules

REPO = Path(__file__).resolve().parent.parent


def run_code(
    code: str,
    *,
    select: tuple[str, ...] | None = None,
    fix: bool = False,
    unsafe: bool = False,
    target: str = "neuron",
    compile: bool = False,
    dedent: bool = True,
    filename: str = "snippet.py",
):
    """Check (or fix) a snippet through the library API; returns the FileResult."""
    text = textwrap.dedent(code) if dedent else code
    settings = Settings(select=select, target_device=target, compile=compile, root=REPO)
    job = Job(enabled_rules(settings), settings, Options(fix=fix, unsafe_fixes=unsafe))
    return check_text(text, filename, job)


def fixed(code: str, **kwargs) -> str:
    result = run_code(code, fix=True, **kwargs)
    assert result.error is None, result.error
    return result.fixed_source if result.fixed_source is not None else textwrap.dedent(code)


def codes(code: str, **kwargs) -> list[str]:
    return [f.code for f in run_code(code, **kwargs).findings]


@pytest.fixture(scope="session")
def all_rules():
    return load_rules()
