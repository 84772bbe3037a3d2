"""One checker per file kind (Python, notebook, project files) over one shared shell
(base.py: read, prefilter, cache, decode, guard, write)."""

from __future__ import annotations

from neuron_migrate.checkers.base import FileKind


def kind_named(name: str) -> FileKind:
    """The file kind of that name ("python", "notebook", "project")."""
    if name == "notebook":
        from neuron_migrate.checkers.notebook import NOTEBOOK

        return NOTEBOOK
    if name == "project":
        from neuron_migrate.checkers.project import PROJECT

        return PROJECT
    from neuron_migrate.checkers.python import PYTHON

    return PYTHON
