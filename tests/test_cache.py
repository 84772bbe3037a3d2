"""The cache: hits for unchanged files, misses for changed content or settings, never fatal."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from neuron_migrate.cli import main
from neuron_migrate.workspace.cache import FOLDER

LEGACY = "import torch_xla.core.xla_model as xm\nxm.mark_step()\n"


def _check(cwd: Path, *args: str):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(
            main, ["check", "--format", "json", *args, "."], catch_exceptions=False
        )
    finally:
        os.chdir(old)


def _cache_files(root: Path) -> list[Path]:
    """One file per configuration."""
    return sorted((root / FOLDER).glob("v2-*.json"))


def _entries(root: Path) -> dict[str, list]:
    (only,) = _cache_files(root)
    return json.loads(only.read_text())["entries"]


def test_cache_is_created_tagged_and_reused(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    first = _check(tmp_path)
    assert (
        (tmp_path / FOLDER / "CACHEDIR.TAG")
        .read_text()
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )
    assert (tmp_path / FOLDER / ".gitignore").read_text().strip().endswith("*")
    assert list(_entries(tmp_path)) == ["a.py"]
    # a hit gives the same findings: prove it by making the entry say something else
    (cache_file,) = _cache_files(tmp_path)
    data = json.loads(cache_file.read_text())
    data["entries"]["a.py"][1][0]["message"] = "from the cache"
    cache_file.write_text(json.dumps(data))
    second = _check(tmp_path)
    assert json.loads(second.output)[0]["message"] == "from the cache"
    assert json.loads(first.output)[0]["code"] == json.loads(second.output)[0]["code"]
    # --no-cache reads afresh
    fresh = _check(tmp_path, "--no-cache")
    assert json.loads(fresh.output)[0]["message"] != "from the cache"


def test_changed_content_or_settings_miss(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    _check(tmp_path)
    (tmp_path / "a.py").write_text(LEGACY + "xm.mark_step()\n")
    assert len(json.loads(_check(tmp_path).output)) == 2
    assert json.loads(_check(tmp_path, "--target-device", "cpu").output)
    assert len(_cache_files(tmp_path)) == 2  # one file per configuration


def test_corrupt_or_foreign_cache_is_ignored(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    _check(tmp_path)
    for cache_file in _cache_files(tmp_path):
        cache_file.write_text("{not json")
    result = _check(tmp_path)
    assert result.exit_code == 1 and json.loads(result.output)[0]["code"] == "NM201"
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.py").write_text(LEGACY)
    (other / FOLDER).mkdir()  # someone else's folder with our name and no tag
    assert _check(other).exit_code == 1
    assert list((other / FOLDER).iterdir()) == []


def test_clean(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    _check(tmp_path)
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(main, ["clean"])
    finally:
        os.chdir(old)
    assert result.exit_code == 0 and "Removed" in result.output
    assert not (tmp_path / FOLDER).exists()


def test_fix_never_uses_stale_cache(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    _check(tmp_path)
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        CliRunner().invoke(main, ["check", "--fix", "."], catch_exceptions=False)
    finally:
        os.chdir(old)
    assert "mark_step" not in (tmp_path / "a.py").read_text()
    assert json.loads(_check(tmp_path).output) == []
