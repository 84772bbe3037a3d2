"""Which kind of file a path is, by its name: Python sources, notebooks, or project files
(requirements, pyproject, shell launchers, Dockerfiles, configs). The checker of each kind is
in neuron_migrate/checkers."""

from __future__ import annotations

from pathlib import PurePath


def kind_of(path: PurePath | str) -> str | None:
    """The kind of a file by its name, or None for a file no checker reads."""
    name = PurePath(path).name
    if _project_format(name) is not None:
        return "project"
    if name.endswith((".py", ".pyi")):
        return "python"
    if name.endswith(".ipynb"):
        return "notebook"
    return None


def _project_format(name: str) -> str | None:
    from neuron_migrate.checkers.project import format_name

    return format_name(name)
