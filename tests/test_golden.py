"""`--fix` over examples/ must change exactly what the checked-in diffs in tests/golden/ say.

tests/golden/<variant>/<path below examples>.diff holds the unified diff that
`neuron-migrate check --diff` prints for that file (paths as seen from the repository root);
a file the fix leaves alone has no .diff. So the golden trees store only what the migration
changes, not a second copy of examples/.

Regenerate after a deliberate change with `NM_UPDATE_GOLDEN=1 pytest tests/test_golden.py`,
then read `git diff tests/golden` before committing it.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from neuron_migrate.cli import main
from neuron_migrate.workspace.filekinds import kind_of
from tests.conftest import REPO, run_code

EXAMPLES = REPO / "examples"
GOLDEN = REPO / "tests" / "golden"
VARIANTS = {
    # name: (run_code settings, the same as command-line options)
    "fix": ({}, []),
    "cpu-unsafe": (
        {"target": "cpu", "unsafe": True},
        ["--unsafe-fixes", "--target-device", "cpu"],
    ),
}
# Python sources and the project files beside them (requirements, launchers, Dockerfiles, configs)
SOURCES = sorted(
    p
    for p in EXAMPLES.rglob("*")
    if p.is_file()
    and not any(part.startswith(".") for part in p.relative_to(EXAMPLES).parts)
    and (p.suffix == ".py" or kind_of(p) == "project")
)
UPDATE = bool(os.environ.get("NM_UPDATE_GOLDEN"))


def migrate(source: Path, variant: str) -> str:
    """The text `--fix` writes for an example file in one variant."""
    text = source.read_text(encoding="utf-8")
    result = run_code(text, fix=True, dedent=False, filename=source.name, **VARIANTS[variant][0])
    assert result.error is None, result.error
    return result.fixed_source if result.fixed_source is not None else text


def unified(source: Path, new: str) -> str:
    """The diff as `neuron-migrate check --diff` prints it from the repository root."""
    name = source.relative_to(REPO).as_posix()
    old = source.read_text(encoding="utf-8")
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=name,
            tofile=name,
        )
    )


def golden_path(source: Path, variant: str) -> Path:
    return GOLDEN / variant / (source.relative_to(EXAMPLES).as_posix() + ".diff")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize(
    "source", SOURCES, ids=[p.relative_to(EXAMPLES).as_posix() for p in SOURCES]
)
def test_golden(source: Path, variant: str):
    out = migrate(source, variant)
    diff = unified(source, out)
    expected = golden_path(source, variant)
    if UPDATE:
        if diff:
            expected.parent.mkdir(parents=True, exist_ok=True)
            expected.write_text(diff, encoding="utf-8")
        else:
            expected.unlink(missing_ok=True)
    if expected.is_file():
        assert diff == expected.read_text(encoding="utf-8")
    else:
        assert diff == "", f"the fix changes {source.name}, but there is no {expected}"
    # the migrated file is itself stable under a second fix
    again = run_code(out, fix=True, dedent=False, filename=source.name, **VARIANTS[variant][0])
    assert again.fixed_source is None


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_no_stale_golden_diffs(variant: str):
    wanted = {golden_path(source, variant) for source in SOURCES}
    stale = sorted(p for p in (GOLDEN / variant).rglob("*") if p.is_file() and p not in wanted)
    if UPDATE:
        for path in stale:
            path.unlink()
        return
    assert stale == [], "golden files without an example (NM_UPDATE_GOLDEN=1 removes them)"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_cli_diff_prints_the_golden_diffs(variant: str, monkeypatch):
    """The command line's `--diff` over examples/ is the golden diffs, file after file."""
    monkeypatch.chdir(REPO)
    options = VARIANTS[variant][1]
    result = CliRunner().invoke(
        main, ["check", "--diff", "--no-cache", "--jobs", "1", "-q", *options, "examples"]
    )
    expected = "".join(
        golden_path(s, variant).read_text(encoding="utf-8")
        for s in SOURCES
        if golden_path(s, variant).is_file()
    )
    assert expected in result.output, result.output[-2000:]
