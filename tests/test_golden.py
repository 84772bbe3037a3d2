"""`--fix` over examples/ must give the checked-in migrated files in tests/golden/.

Regenerate after a deliberate change with `NM_UPDATE_GOLDEN=1 pytest tests/test_golden.py`,
then read the diff before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from neuron_migrate.workspace.filekinds import kind_of
from tests.conftest import REPO, run_code

EXAMPLES = REPO / "examples"
VARIANTS = {
    # name: (settings, folder)
    "fix": ({}, REPO / "tests" / "golden" / "fix"),
    "cpu-unsafe": ({"target": "cpu", "unsafe": True}, REPO / "tests" / "golden" / "cpu-unsafe"),
}
# Python sources and the project files beside them (requirements, launchers, Dockerfiles, configs)
SOURCES = sorted(
    p
    for p in EXAMPLES.rglob("*")
    if p.is_file()
    and not any(part.startswith(".") for part in p.relative_to(EXAMPLES).parts)
    and (p.suffix == ".py" or kind_of(p) == "project")
)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize(
    "source", SOURCES, ids=[p.relative_to(EXAMPLES).as_posix() for p in SOURCES]
)
def test_golden(source: Path, variant: str):
    settings, folder = VARIANTS[variant]
    text = source.read_text(encoding="utf-8")
    result = run_code(text, fix=True, dedent=False, filename=source.name, **settings)
    assert result.error is None
    out = result.fixed_source if result.fixed_source is not None else text
    expected = folder / source.relative_to(EXAMPLES)
    if os.environ.get("NM_UPDATE_GOLDEN"):
        expected.parent.mkdir(parents=True, exist_ok=True)
        expected.write_text(out, encoding="utf-8")
    assert expected.is_file(), f"missing golden file {expected}"
    assert out == expected.read_text(encoding="utf-8")
    # the golden output is itself stable under a second fix
    again = run_code(out, fix=True, dedent=False, filename=source.name, **settings)
    assert again.fixed_source is None
