from __future__ import annotations

import gc
import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest

from neuron_migrate.api import check_text, enabled_rules
from neuron_migrate.checkers.base import Job, Options
from neuron_migrate.config.settings import Settings
from neuron_migrate.packs.loader import load_rules

REPO = Path(__file__).resolve().parent.parent

PACK_CACHE_ENV = "NEURON_MIGRATE_CACHE_DIR"
_pack_cache: dict[str, str | None] = {}


def pytest_configure(config) -> None:
    """The parsed rule packs go to a folder of the session (inherited by the command lines the
    tests start), never to the real ~/.cache: set before collection, which loads rules too."""
    _pack_cache["before"] = os.environ.get(PACK_CACHE_ENV)
    _pack_cache["folder"] = os.environ[PACK_CACHE_ENV] = tempfile.mkdtemp(
        prefix="neuron-migrate-cache-"
    )
    # the collector setting the command line runs with (cli.entry): the tests run the engine
    # in this process, and collect garbage as a real run does, in a tenth less time
    from neuron_migrate.cli import GC_THRESHOLDS

    gc.set_threshold(*GC_THRESHOLDS)


def pytest_unconfigure(config) -> None:
    folder = _pack_cache.pop("folder", None)
    if folder is None:
        return
    shutil.rmtree(folder, ignore_errors=True)
    before = _pack_cache.pop("before", None)
    if before is None:
        os.environ.pop(PACK_CACHE_ENV, None)
    else:
        os.environ[PACK_CACHE_ENV] = before


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
