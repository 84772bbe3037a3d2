"""The library API behind the command line: run(paths, settings, options) -> RunResult."""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass, field
from pathlib import Path

from neuron_migrate.checkers import kind_named
from neuron_migrate.checkers.base import (
    PARSE_ERROR,
    Job,
    Options,
    check_file,
    finding_key,
    from_cache,
    problem,
    settled,
)
from neuron_migrate.config.settings import Settings, covers, ignored_codes_for, select_rules
from neuron_migrate.model import FileResult, Finding
from neuron_migrate.packs.docs import ExampleRun
from neuron_migrate.packs.loader import Example, Rule, load_rules
from neuron_migrate.workspace import filekinds
from neuron_migrate.workspace.apart import beside, can_fork
from neuron_migrate.workspace.cache import Cache, content_digest
from neuron_migrate.workspace.companions import companion_targets, write_companions
from neuron_migrate.workspace.discovery import discover, resolve

# below this many files to parse (those the prefilter lets through) a process pool costs more
# than it saves
POOL_THRESHOLD = 16
# from this many files not served from the cache, a child process prefilters them while this
# one loads LibCST and the rules' code (workspace/apart.py)
PREFILTER_APART = 64


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    # companion modules written beside the fixed files (workspace/companions.py)
    created: list[Path] = field(default_factory=list)
    # with --diff: the companion modules a fix would create, each its path and source
    would_create: list[tuple[Path, str]] = field(default_factory=list)
    # files found to check (a path with none gets a warning, not "All checks passed!")
    checked: int = 0

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


def _relative(path: Path, root: Path, real: Path | None = None) -> str:
    try:
        return (real or resolve(path)).relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


_worker_job: Job | None = None


def _init_worker(rules: tuple[Rule, ...], settings: Settings, options: Options, store) -> None:
    global _worker_job
    # a worker's results go back to the main process, which writes the cache once
    _worker_job = Job(rules, settings, options, cache=store.recorder() if store else None)


def _kind(path: Path):
    """The checker of a file's kind (a file named explicitly with no known kind is read as
    Python, as ruff does)."""
    return kind_named(filekinds.kind_of(path) or "python")


def check_one(path: Path, display: str, relative: str, job: Job) -> FileResult:
    """Check one file with the checker of its kind."""
    return check_file(_kind(path), path, display, relative, job)


def settled_here(path: Path, display: str, relative: str, job: Job) -> FileResult | None:
    """The result of a file that needs no checker (checkers.base.settled: a cache hit or a
    prefilter skip). None: the file is to be checked (or cannot be read, which check_one
    says)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return settled(_kind(path), data, display, relative, job)


def _settle(result: RunResult, file: FileResult, progress) -> None:
    result.files.append(file)
    if progress is not None:
        progress.advance()


def _verdict(item: tuple[str, str, str], job: Job) -> str | None:
    """What the prefilter says of a file: None when it is to be checked (or cannot be read,
    which check_one says), else the digest of the bytes it skipped (for the cache)."""
    path, _display, relative = item
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    return None if _kind(Path(path)).wants(data, job, relative) else content_digest(data)


def _prepare_to_parse(job: Job, items: list[tuple[str, str, str]]) -> None:
    """Load what parsing needs (LibCST, the rules' code, the engine) before the workers fork,
    so that they share it."""
    job.ruleset_for(items[0][2]).load_code()
    from neuron_migrate.checkers.python import load_engine

    load_engine()


def _settle_apart(
    items: list[tuple[str, str, str]], job: Job, result: RunResult, progress
) -> list[tuple[str, str, str]]:
    """The cache hits, then the prefilter of the rest in a forked child while this process
    loads what parsing needs (workspace/apart.py); the files left to check."""
    store = job.cache if not job.options.rewrites else None
    misses = [] if store is not None else items
    for item in items if store is not None else ():
        try:
            data = Path(item[0]).read_bytes()
        except OSError:
            misses.append(item)
            continue
        cached = from_cache(data, item[1], item[2], job)
        if cached is None:
            misses.append(item)
        else:
            _settle(result, cached, progress)
    if not misses:
        return []
    verdicts = None
    if len(misses) >= PREFILTER_APART:
        verdicts = beside(
            lambda: [_verdict(item, job) for item in misses],
            lambda: _prepare_to_parse(job, misses),
        )
    if verdicts is None:
        verdicts = [_verdict(item, job) for item in misses]
    left = []
    for item, digest in zip(misses, verdicts):
        if digest is None:
            left.append(item)
            continue
        if store is not None:
            store.put_digest(item[2], digest, [])
        _settle(result, FileResult(item[1]), progress)
    return left


def _size(item: tuple[str, str, str]) -> int:
    try:
        return os.path.getsize(item[0])
    except OSError:
        return 0


def _work(item: tuple[str, str, str]) -> tuple[FileResult, dict]:
    """A worker's check of one file: its result and the cache entries it made."""
    path, display, relative = item
    job = _worker_job
    assert job is not None
    result = check_one(Path(path), display, relative, job)
    return result, job.cache.take() if job.cache is not None else {}


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
        items.append((str(found.path), display, _relative(found.path, settings.root, found.real)))
    jobs = jobs or os.cpu_count() or 1
    result.checked = len(items)
    relatives = {display: relative for _path, display, relative in items}
    # cache hits are served here, before any worker starts: a re-run of an unchanged tree
    # costs a read and a hash per file (check_file caches every kind of file, and a file the
    # prefilter skips too); so are the files the prefilter skips, most of a real tree, so that
    # only the files to parse are counted for the pool, and sent to it
    if jobs > 1 and len(items) >= PREFILTER_APART and can_fork():
        # the progress bar draws from a thread, and a child is forked only without one: the
        # bar starts once the files are settled, at the count they make
        total = len(items)
        items = _settle_apart(items, job, result, None)
        if progress is not None:
            progress.start(total)
            for _settled in range(total - len(items)):
                progress.advance()
    else:
        if progress is not None:
            progress.start(len(items))
        misses = []
        for item in items:
            done = settled_here(Path(item[0]), item[1], item[2], job)
            if done is None:
                misses.append(item)
                continue
            _settle(result, done, progress)
        items = misses
    if jobs > 1 and len(items) >= POOL_THRESHOLD:
        from neuron_migrate.workspace.pool import run_pool  # not imported when all files hit

        # the workers are forked: a collection in one of them would write to every object it
        # inherited (the rule sets, LibCST's modules), copying the pages they are on; frozen,
        # they are left out of collections (about 0.04 s of CPU on pytorch-lightning)
        gc.freeze()
        # one file at a time to each worker: the progress bar moves per file, and a worker
        # that dies takes only its own file with it (workspace.pool); the largest files first,
        # so that no worker is left with a big one at the end while the others wait (the
        # results are sorted by path below)
        files = run_pool(
            sorted(items, key=_size, reverse=True),
            jobs,
            _work,
            _init_worker,
            (rules, settings, options, store),
            lambda item: check_one(Path(item[0]), item[1], item[2], job),
        )
        try:
            for done in files:
                # a worker's (result, cache entries); a file checked here or lost with its
                # worker comes as a bare result
                file, entries = done if isinstance(done, tuple) else (done, None)
                if entries and store is not None:
                    store.adopt(entries)
                result.files.append(file)
                if progress is not None:
                    progress.advance()
        finally:
            gc.unfreeze()
    else:
        for path, display, relative in items:
            result.files.append(check_one(Path(path), display, relative, job))
            if progress is not None:
                progress.advance()
    if store is not None:
        store.save()
    for file in result.files:
        unreadable_as_warnings(file, settings, rules, relatives.get(file.path, file.path))
    result.files.sort(key=lambda r: r.path)
    if options.fix:
        result.created = write_companions(result.files)
    elif options.diff:
        result.would_create = companion_targets(result.files, written=False)
    return result


def unreadable_as_warnings(
    file: FileResult, settings: Settings, rules: tuple[Rule, ...], relative: str
) -> FileResult:
    """NM000 (a file not checked) is a rule like any other for --select, --ignore and
    per-file-ignores; when it is off, a file that could not be checked is still said, as a
    warning line instead of a finding."""
    code = PARSE_ERROR[0]
    if not any(f.code == code for f in file.findings):
        return file
    ignored = ignored_codes_for(settings, relative)
    if any(r.code == code for r in rules) and not any(
        covers(selector, r) for selector in ignored for r in rules if r.code == code
    ):
        return file
    for finding in file.findings:
        if finding.code == code:
            file.warnings.append(f"{finding.location}: not checked: {finding.message}")
    file.findings = [f for f in file.findings if f.code != code]
    return file


def make_job(settings: Settings, options: Options) -> Job:
    """What checking shares across files; a caller checking many texts keeps one (editors)."""
    return Job(enabled_rules(settings), settings, options)


def run_source(
    text: str, filename: str, settings: Settings, options: Options, job: Job | None = None
) -> FileResult:
    """Check source text given directly (stdin, editors, tests). `job`: one from make_job with
    the same settings and options, to reuse its rule sets."""
    job = job or make_job(settings, options)
    relative = _relative(Path(filename), settings.root)
    file = check_text(text, filename, job, relative)
    return unreadable_as_warnings(file, settings, job.rules, relative)


def fix_source(
    text: str,
    filename: str,
    settings: Settings,
    findings: list[Finding] | None = None,
    unsafe_fixes: bool = False,
) -> FileResult:
    """Fix source text: every fixable finding, or only `findings` (found in this same text by
    run_source) in one round. The new text is `fixed_source` (None: nothing changed)."""
    return run_source(text, filename, settings, fix_options(findings, unsafe_fixes))


def fix_options(findings: list[Finding] | None = None, unsafe_fixes: bool = False) -> Options:
    """The options that fix every fixable finding, or only `findings`."""
    only = None if findings is None else frozenset(finding_key(f) for f in findings)
    return Options(fix=True, unsafe_fixes=unsafe_fixes, only=only)


def check_text(text: str, filename: str, job: Job, relative: str | None = None) -> FileResult:
    """Check text as the file `filename` (its name picks the kind), prefilter included."""
    kind = kind_named(filekinds.kind_of(filename) or "python")
    relative = relative if relative is not None else filename
    if not kind.wants(text.encode("utf-8", "surrogatepass"), job, relative):
        return FileResult(filename, original_source=text)
    return kind.check_text(text, filename, job, relative)


def _example_job(
    rule: Rule, example: Example, packs: tuple[str, ...], jobs: dict, fix: bool
) -> Job:
    unsafe = bool(example.settings.get("unsafe-fixes", False))
    key = (
        str(example.settings.get("target-device", "neuron")),
        bool(example.settings.get("compile", False)),
        unsafe,
        fix,
        rule.default,
    )
    if key not in jobs:
        # an opt-in pack's examples run with every pack on, the others with the default packs
        select = None if rule.default else ("ALL",)
        settings = Settings(select=select, target_device=key[0], compile=key[1], packs=packs)
        options = Options(fix=fix, unsafe_fixes=unsafe)
        jobs[key] = Job(enabled_rules(settings), settings, options)
    return jobs[key]


def _check_example(example: Example, job: Job) -> FileResult:
    return check_text(example.before, example.file, job, example.file)


def _run_example(rule: Rule, example: Example, packs: tuple[str, ...], jobs: dict) -> ExampleRun:
    job = _example_job(rule, example, packs, jobs, fix=False)
    result = _check_example(example, job)
    own = tuple((f.span.line, f.message) for f in result.findings if f.code == rule.code)
    fixed: list[str] = []
    reported: list[str] = []
    for finding in result.findings:
        if finding.code == rule.code:
            continue
        label = f"{finding.code} ({finding.name})"
        applies = finding.fix is not None and (
            finding.fix.safety.value == "safe" or job.options.unsafe_fixes
        )
        target = fixed if applies else reported
        if label not in target:
            target.append(label)
    reported = [label for label in reported if label not in fixed]
    if fixed and example.after is not None and rule.fix_safety != "manual":
        # the example's `after` is this rule's fix: other rules change the code only when
        # fixing with every rule writes something else
        everything = _check_example(example, _example_job(rule, example, packs, jobs, fix=True))
        if (everything.fixed_source or example.before) == example.after:
            fixed = []
    return ExampleRun(own, tuple(fixed), tuple(reported))


def example_runs(
    rules: tuple[Rule, ...], packs: tuple[str, ...] = ()
) -> dict[str, tuple[ExampleRun, ...]]:
    """code -> what `check` prints for each of the rule's examples, every rule enabled and the
    example's own settings (target device, compile, unsafe fixes); no project configuration is
    read, so the pages are the same wherever they are generated."""
    jobs: dict = {}
    return {
        rule.code: tuple(_run_example(rule, example, packs, jobs) for example in rule.examples)
        for rule in rules
    }


def rule_page(rule: Rule, packs: tuple[str, ...] = ()) -> str:
    """The `explain` page of one rule, with what `check` prints for each of its examples (for
    the CLI, editors' hovers and any other caller: `packs.docs.explain` needs the runs)."""
    from neuron_migrate.packs import docs

    return docs.explain(rule, example_runs((rule,), packs)[rule.code])
