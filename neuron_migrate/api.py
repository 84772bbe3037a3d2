"""The library API behind the command line: run(paths, settings, options) -> RunResult."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from neuron_migrate.checkers import kind_named
from neuron_migrate.checkers.base import Job, Options, check_file, problem
from neuron_migrate.config.settings import Settings, select_rules
from neuron_migrate.model import FileResult, Finding
from neuron_migrate.packs.loader import Rule, load_rules
from neuron_migrate.workspace import filekinds
from neuron_migrate.workspace.cache import Cache
from neuron_migrate.workspace.companions import write_companions
from neuron_migrate.workspace.discovery import discover, resolve

# below this many files a process pool costs more than it saves
POOL_THRESHOLD = 64


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    # companion modules written beside the fixed files (workspace/companions.py)
    created: list[Path] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return sorted((f for r in self.files for f in r.findings), key=Finding.sort_key)

    @property
    def errors(self) -> list[FileResult]:
        return [r for r in self.files if r.error]

    @property
    def fixed(self) -> int:
        return sum(r.applied for r in self.files)


def enabled_rules(settings: Settings) -> tuple[Rule, ...]:
    return select_rules(settings, load_rules(settings.packs))


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def _relative(path: Path, root: Path) -> str:
    try:
        return resolve(path).relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


_worker_job: Job | None = None


def _init_worker(rules: tuple[Rule, ...], settings: Settings, options: Options, store) -> None:
    global _worker_job
    _worker_job = Job(rules, settings, options, cache=store)


def check_one(path: Path, display: str, relative: str, job: Job) -> FileResult:
    """Check one file with the checker of its kind (a file named explicitly with no known kind
    is read as Python, as ruff does)."""
    kind = kind_named(filekinds.kind_of(path) or "python")
    return check_file(kind, path, display, relative, job)


def _work(item: tuple[str, str, str]) -> FileResult:
    path, display, relative = item
    assert _worker_job is not None
    return check_one(Path(path), display, relative, _worker_job)


def run(
    paths: list[Path],
    settings: Settings,
    options: Options,
    jobs: int | None = None,
    force_exclude: bool = False,
    progress=None,
    cache: bool = True,
) -> RunResult:
    """Check the files under `paths`. `progress`, when given, gets `start(total)` once the
    files are known and `advance()` after each file (see neuron_migrate.cli.progress)."""
    rules = enabled_rules(settings)
    store = (
        Cache.for_run(settings.root, rules, settings.fingerprint(), settings.packs)
        if cache
        else None
    )
    job = Job(rules, settings, options, cache=store)
    result = RunResult()
    items = []
    for found in discover(paths, settings, force_exclude=force_exclude):
        display = _display(found.path)
        if found.problem:
            result.files.append(FileResult(display, findings=[problem(display, found.problem)]))
            continue
        items.append((str(found.path), display, _relative(found.path, settings.root)))
    jobs = jobs or os.cpu_count() or 1
    if progress is not None:
        progress.start(len(items))
    if jobs > 1 and len(items) >= POOL_THRESHOLD:
        with ProcessPoolExecutor(
            max_workers=jobs, initializer=_init_worker, initargs=(rules, settings, options, store)
        ) as pool:
            chunks = max(1, len(items) // (jobs * 8))
            for file in pool.map(_work, items, chunksize=chunks):
                result.files.append(file)
                if progress is not None:
                    progress.advance()
    else:
        for path, display, relative in items:
            result.files.append(check_one(Path(path), display, relative, job))
            if progress is not None:
                progress.advance()
    result.files.sort(key=lambda r: r.path)
    if options.fix:
        result.created = write_companions(result.files)
    return result


def run_source(text: str, filename: str, settings: Settings, options: Options) -> FileResult:
    """Check source text given directly (stdin, editors, tests)."""
    job = Job(enabled_rules(settings), settings, options)
    return check_text(text, filename, job, _relative(Path(filename), settings.root))


def check_text(text: str, filename: str, job: Job, relative: str | None = None) -> FileResult:
    """Check text as the file `filename` (its name picks the kind), prefilter included."""
    kind = kind_named(filekinds.kind_of(filename) or "python")
    relative = relative if relative is not None else filename
    if not kind.wants(text.encode("utf-8", "surrogatepass"), job, relative):
        return FileResult(filename, original_source=text)
    return kind.check_text(text, filename, job, relative)
