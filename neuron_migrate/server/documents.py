"""Check what the editor has open: text documents and notebooks (cell by cell), in process,
one parse per check. The last result of each document is kept for code actions and hover."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from pygls.uris import to_fs_path

from neuron_migrate.api import Options, run_source
from neuron_migrate.checkers.base import problem
from neuron_migrate.config.settings import ConfigError, Settings
from neuron_migrate.model import FileResult, Finding
from neuron_migrate.packs.loader import PackError, Rule, load_rules
from neuron_migrate.server.config import SettingsStore
from neuron_migrate.workspace.discovery import is_excluded
from neuron_migrate.workspace.filekinds import kind_of

log = logging.getLogger(__name__)
CHECK = Options()


@dataclass
class Checked:
    """One text document as last checked."""

    uri: str
    text: str
    filename: str
    settings: Settings
    result: FileResult


@dataclass
class Cell:
    uri: str
    text: str
    code: bool


@dataclass
class NotebookChecked:
    """One notebook as last checked: its cells (code and markdown, in order) and the findings,
    whose `cell` counts every cell from 1."""

    uri: str
    filename: str
    settings: Settings
    cells: list[Cell]
    result: FileResult

    def findings_of(self, cell_uri: str) -> list[Finding]:
        numbers = {i for i, c in enumerate(self.cells, 1) if c.uri == cell_uri}
        return [f for f in self.result.findings if f.cell in numbers]

    def cell_number(self, cell_uri: str) -> int | None:
        return next((i for i, c in enumerate(self.cells, 1) if c.uri == cell_uri), None)


def notebook_json(cells: list[Cell]) -> str:
    """The cells as a notebook's JSON text, for the notebook checker."""
    return json.dumps(
        {
            "cells": [
                {"cell_type": "code" if c.code else "markdown", "source": c.text} for c in cells
            ],
            "metadata": {"language_info": {"name": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def filename_of(uri: str) -> str:
    path = to_fs_path(uri)
    return path if path else uri.rsplit("/", 1)[-1] or "untitled.py"


class Checker:
    def __init__(self, store: SettingsStore):
        self.store = store
        self.texts: dict[str, Checked] = {}
        self.notebooks: dict[str, NotebookChecked] = {}
        self._excluded: dict[str, bool] = {}

    def excluded(self, filename: str, settings: Settings) -> bool:
        """Is the file one the command line skips (excludes, .gitignore)? Editors show no
        findings there either, as ruff's server does."""
        if filename not in self._excluded:
            path = Path(filename)
            self._excluded[filename] = path.is_absolute() and is_excluded(path, settings)
        return self._excluded[filename]

    def settings_for(self, filename: str) -> Settings:
        path = Path(filename)
        if not path.is_absolute():
            path = Path.cwd() / path
        return self.store.settings_for(path)

    def rule(self, settings: Settings, code: str) -> Rule | None:
        try:
            return next((r for r in load_rules(settings.packs) if r.code == code), None)
        except PackError:
            return None

    def run(self, text: str, filename: str, settings: Settings, options: Options) -> FileResult:
        """run_source, where any failure becomes a finding: the server keeps serving."""
        try:
            job = self.store.job(settings, options)
            return run_source(text, filename, settings, options, job)
        except (ConfigError, PackError) as exc:
            return FileResult(filename, findings=[problem(filename, f"configuration: {exc}")])
        except Exception as exc:  # noqa: BLE001 - one document must not stop the server
            log.exception("checking %s failed", filename)
            return FileResult(filename, error=f"internal error: {type(exc).__name__}: {exc}")

    def check_text(self, uri: str, text: str, language_id: str | None = None) -> Checked | None:
        """Check a text document; None when no checker reads its kind of file, or it is
        excluded."""
        filename = filename_of(uri)
        if kind_of(filename) is None:
            if language_id != "python":
                return None
            filename += ".py"  # an untitled buffer the editor says is Python
        cached = self.texts.get(uri)
        if cached is not None and cached.text == text:
            return cached
        settings = self.settings_for(filename)
        if self.excluded(filename, settings):
            return None
        checked = Checked(uri, text, filename, settings, self.run(text, filename, settings, CHECK))
        self.texts[uri] = checked
        return checked

    def check_notebook(self, uri: str, cells: list[Cell]) -> NotebookChecked:
        filename = filename_of(uri)
        if not filename.endswith(".ipynb"):
            filename += ".ipynb"
        cached = self.notebooks.get(uri)
        if cached is not None and cached.cells == cells:
            return cached
        settings = self.settings_for(filename)
        if self.excluded(filename, settings):
            result = FileResult(filename)
        else:
            result = self.run(notebook_json(cells), filename, settings, CHECK)
        checked = NotebookChecked(uri, filename, settings, cells, result)
        self.notebooks[uri] = checked
        return checked

    def forget(self, uri: str) -> None:
        self.texts.pop(uri, None)
        self.notebooks.pop(uri, None)

    def reload(self) -> None:
        """Settings changed: every result is stale."""
        self.store.reload()
        self.texts.clear()
        self.notebooks.clear()
        self._excluded.clear()
