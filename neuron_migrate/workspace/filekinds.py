"""Which checker reads a file: Python sources here; notebooks and project files (requirements,
pyproject, shell launchers, Dockerfiles, configs) register their checker in CHECKERS."""

from __future__ import annotations

from pathlib import PurePath

# kind -> "module:function" with the signature of engine.pipeline.check_path; imported lazily
CHECKERS: dict[str, str] = {
    "python": "neuron_migrate.checkers.python:check_path",
    # requirements, pyproject.toml, setup.cfg, setup.py (Python checks included), shell
    # launchers, Dockerfiles, YAML / JSON / TOML configs: neuron_migrate/checkers/project
    "project": "neuron_migrate.checkers.project:check_project_path",
    "notebook": "neuron_migrate.checkers.notebook:check_notebook_path",
}
# kind -> "module:function" with the signature of engine.pipeline.check_source (text in, no I/O)
SOURCE_CHECKERS: dict[str, str] = {
    "python": "neuron_migrate.checkers.python:check_source",
    "project": "neuron_migrate.checkers.project:check_project_source",
    "notebook": "neuron_migrate.checkers.notebook:check_notebook_source",
}


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


def load(spec: str):
    module_name, _, function = spec.partition(":")
    module = __import__(module_name, fromlist=[function])
    return getattr(module, function)


def checker(kind: str):
    return load(CHECKERS[kind])


def source_checker(kind: str):
    return load(SOURCE_CHECKERS[kind])
