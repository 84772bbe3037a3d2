"""Import the code module of a rule (`rules/xla/NM401_device_loader.py`) once per process.

rules/ is not a Python package: each pack folder becomes one under `neuron_migrate_rules`, made
here, so that a rule module can import its pack's shared code relatively (`from . import pack`).
Used by the Python engine's code rules and by the project-file rules alike.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import types
from pathlib import Path

ROOT = "neuron_migrate_rules"


def _package(folder: Path) -> str:
    """The package of a pack folder: `neuron_migrate_rules.<folder name>`, or with a suffix when
    another folder of that name (a user's pack) came first."""
    if ROOT not in sys.modules:
        root = types.ModuleType(ROOT)
        root.__path__ = []
        sys.modules[ROOT] = root
    where = str(folder.resolve())
    name = ROOT + "." + re.sub(r"\W", "_", folder.name)
    taken = sys.modules.get(name)
    if taken is not None and list(taken.__path__) != [where]:
        name += "_" + hashlib.sha1(where.encode()).hexdigest()[:8]
    if name not in sys.modules:
        package = types.ModuleType(name)
        package.__path__ = [where]
        sys.modules[name] = package
    return name


def import_rule_module(path: str | Path) -> types.ModuleType:
    """The module of a rule's `.py` file, imported once, as `neuron_migrate_rules.<pack>.<stem>`."""
    file = Path(path)
    name = f"{_package(file.parent)}.{file.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the code rule {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
