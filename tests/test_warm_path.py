"""A re-run over an unchanged tree: every result from the cache, no worker started."""

from __future__ import annotations

import concurrent.futures
import json
from pathlib import Path

import pytest

from neuron_migrate import api
from neuron_migrate.checkers.base import Options
from neuron_migrate.config.settings import Settings
from neuron_migrate.workspace.cache import FOLDER

LEGACY = "import torch_xla.core.xla_model as xm\nxm.mark_step()\n"
NOTEBOOK = {
    "cells": [{"cell_type": "code", "metadata": {}, "source": LEGACY, "outputs": []}],
    "metadata": {"language_info": {"name": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def _tree(root: Path, n: int) -> None:
    for i in range(n):
        body = LEGACY if i % 3 == 0 else "import os\nprint(os.sep)\n"
        (root / f"m{i:03}.py").write_text(body)
    (root / "explore.ipynb").write_text(json.dumps(NOTEBOOK))
    (root / "requirements.txt").write_text("torch-xla==2.1\n")


def _summary(result: api.RunResult) -> list[tuple[str, str, int]]:
    return [(f.path, f.code, f.span.line) for f in result.findings]


def test_an_unchanged_tree_is_served_from_the_cache_without_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path, api.POOL_THRESHOLD + 10)
    settings = Settings(root=tmp_path)
    first = api.run([tmp_path], settings, Options(), jobs=1)
    # every file has an entry, the clean ones too (the prefilter does not run again)
    (cache_file,) = (tmp_path / FOLDER).glob("v2-*.json")
    assert len(json.loads(cache_file.read_text())["entries"]) == api.POOL_THRESHOLD + 12

    class NoPool:
        def __init__(self, *args, **kwargs):
            raise AssertionError("a worker pool started for a fully cached run")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", NoPool)
    again = api.run([tmp_path], settings, Options(), jobs=2)
    assert _summary(again) == _summary(first)
    codes = {f.code for f in again.findings if f.path.endswith((".ipynb", ".txt"))}
    assert codes  # notebooks and project files come from the cache too


def test_a_changed_file_is_checked_again(tmp_path: Path) -> None:
    _tree(tmp_path, 4)
    settings = Settings(root=tmp_path)
    api.run([tmp_path], settings, Options(), jobs=1)
    (tmp_path / "m001.py").write_text(LEGACY)
    again = api.run([tmp_path], settings, Options(), jobs=1)
    assert any(f.path.endswith("m001.py") for f in again.findings)


def test_a_users_pack_folder_keys_the_cache_by_its_files(tmp_path: Path) -> None:
    from neuron_migrate.workspace.cache import Cache

    pack = tmp_path / "mypack"
    pack.mkdir()
    (pack / "pack.toml").write_text('[pack]\nname = "mine"\n')
    (pack / "NM950_x.toml").write_text('code = "NM950"\n')
    before = Cache.for_run(tmp_path, (), "settings", (str(pack),)).file
    (pack / "NM950_x.toml").write_text('code = "NM950"\nname = "changed"\n')
    assert Cache.for_run(tmp_path, (), "settings", (str(pack),)).file != before


def test_start_up_does_not_import_libcst() -> None:
    """`--version` and a run served from the cache parse nothing: LibCST stays unloaded."""
    import subprocess
    import sys

    code = "import sys, neuron_migrate.cli.app, neuron_migrate.api; print('libcst' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow  # two runs of the command line
def test_sarif_fixes_of_results_served_from_the_cache(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "train.py").write_text(LEGACY)

    def sarif() -> dict:
        out = subprocess.run(
            [sys.executable, "-m", "neuron_migrate", "check", "--format", "sarif", "."],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        return json.loads(out.stdout)

    fresh, cached = sarif(), sarif()
    assert (tmp_path / FOLDER).is_dir()
    assert fresh == cached and "fixes" in fresh["runs"][0]["results"][0]


def test_the_workers_results_are_cached_by_the_main_process(tmp_path: Path) -> None:
    """With a process pool, each worker hands its cache entries back; one file is written."""
    for i in range(api.POOL_THRESHOLD + 2):
        (tmp_path / f"m{i:03}.py").write_text(LEGACY + f"x = {i}\n")
    settings = Settings(root=tmp_path)
    first = api.run([tmp_path], settings, Options(), jobs=2)
    (cache_file,) = (tmp_path / FOLDER).glob("v2-*.json")
    entries = json.loads(cache_file.read_text())["entries"]
    assert sorted(entries) == sorted(f"m{i:03}.py" for i in range(api.POOL_THRESHOLD + 2))
    assert all(findings for _digest, findings in entries.values())
    assert [p.name for p in (tmp_path / FOLDER).iterdir() if p.name.startswith(".tmp")] == []
    again = api.run([tmp_path], settings, Options(), jobs=2)
    assert _summary(again) == _summary(first)


def test_a_save_keeps_what_another_run_wrote_and_replaces_a_changed_file(tmp_path: Path) -> None:
    from neuron_migrate.workspace.cache import Cache

    one, two = Cache(tmp_path, "same"), Cache(tmp_path, "same")
    assert one.get("a.py", b"a", "a.py") is None and two.get("b.py", b"b", "b.py") is None
    one.put("a.py", b"a", [])
    two.put("b.py", b"b", [])
    one.save()
    two.save()  # read before one saved: the save reads the file again
    three = Cache(tmp_path, "same")
    assert three.get("a.py", b"a", "a.py") == [] and three.get("b.py", b"b", "b.py") == []
    three.put("a.py", b"a, changed", [])
    three.save()
    (cache_file,) = (tmp_path / FOLDER).glob("v2-*.json")
    assert sorted(json.loads(cache_file.read_text())["entries"]) == ["a.py", "b.py"]
    assert Cache(tmp_path, "same").get("a.py", b"a", "a.py") is None
