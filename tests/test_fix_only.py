"""api.fix_source with chosen findings: only those are fixed (what an editor's quick fix does)."""

from __future__ import annotations

import json
from pathlib import Path

from neuron_migrate import api
from neuron_migrate.checkers.base import Options
from neuron_migrate.config.settings import Settings

TEXT = "import torch_xla.core.xla_model as xm\n\nxm.mark_step()\nx = 1\nxm.mark_step()\n"


def test_fix_one_finding_of_a_python_file(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path)
    name = str(tmp_path / "train.py")
    found = api.run_source(TEXT, name, settings, Options()).findings
    assert [f.code for f in found] == ["NM201", "NM201"]
    one = api.fix_source(TEXT, name, settings, [found[1]])
    assert one.fixed_source == "import torch_xla.core.xla_model as xm\n\nxm.mark_step()\nx = 1\n"
    assert [f.span.line for f in one.findings] == [3]  # the other finding is still there
    everything = api.fix_source(TEXT, name, settings)
    assert everything.fixed_source == "\nx = 1\n"


def test_fix_one_finding_of_a_notebook_cell(tmp_path: Path) -> None:
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": TEXT},
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": "xm.mark_step()\n"},
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = json.dumps(notebook)
    settings = Settings(root=tmp_path)
    name = str(tmp_path / "explore.ipynb")
    found = api.run_source(text, name, settings, Options()).findings
    assert [(f.cell, f.span.line) for f in found] == [(1, 3), (1, 5), (2, 1)]
    fixed = api.fix_source(text, name, settings, [found[2]])
    cells = json.loads(fixed.fixed_source)["cells"]
    assert cells[0]["source"] == TEXT and cells[1]["source"] == ""
