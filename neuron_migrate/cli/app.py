"""The command line: a thin layer over runner.run (options -> Settings -> run -> reporter)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from neuron_migrate import __version__
from neuron_migrate.checkers.base import Options
from neuron_migrate.config.settings import TARGET_DEVICES, ConfigError, Settings, load_settings
from neuron_migrate.packs.loader import PackError, load_rules
from neuron_migrate.report import FORMATS, Context, is_machine, render
from neuron_migrate.report.text import summary as text_summary

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # the shell's code for SIGINT


def _codes(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _use_color(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def _fail(message: str) -> None:
    click.echo(f"neuron-migrate: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _settings(config: Path | None, paths: list[Path], overrides: dict) -> Settings:
    start = paths[0] if paths else Path.cwd()
    start = start if start.is_dir() else start.parent
    settings = load_settings(config, start if start.exists() else Path.cwd())
    settings = settings.with_overrides(**overrides)
    settings.target  # noqa: B018 - validates --target-device
    return settings


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="neuron-migrate")
def main() -> None:
    """Move PyTorch/XLA code on AWS Trainium to TorchNeuron, the native PyTorch backend."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option(
    "--unsafe-fixes", is_flag=True, help="Also apply (and count as fixable) unsafe fixes."
)
@click.option("--diff", is_flag=True, help="Print the fixes as unified diffs; write nothing.")
@click.option("--select", help="Rules to check: codes, prefixes (NM2, NM), names or ALL.")
@click.option("--extend-select", help="Rules to add to the selection.")
@click.option("--ignore", help="Rules to leave out.")
@click.option("--extend-ignore", help="Rules to leave out, besides the configured `ignore`.")
@click.option(
    "--exclude",
    help="Globs of files and folders to skip, instead of the configured `exclude`.",
)
@click.option("--extend-exclude", help="Globs to skip, besides the configured ones.")
@click.option(
    "--per-file-ignores",
    multiple=True,
    metavar="GLOB:CODES",
    help="Rules to leave out in files matching GLOB (e.g. 'tests/*.py:NM2'); repeatable; "
    "instead of the configured `per-file-ignores`.",
)
@click.option(
    "--show-settings", is_flag=True, help="Print the settings the run would use, then exit."
)
@click.option("--show-files", is_flag=True, help="Print the files the run would check, then exit.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text/full (with source), concise, json, json-lines, github, junit, sarif.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the report to this file instead of stdout.",
)
@click.option("--statistics", is_flag=True, help="Print counts per rule instead of findings.")
@click.option(
    "--target-device",
    type=click.Choice(TARGET_DEVICES, case_sensitive=False),
    help="Device the fixes write: neuron (default), cpu or cuda.",
)
@click.option(
    "--compile/--no-compile",
    "compile_",
    default=None,
    help="Let the compile-model rule insert torch.compile after a model moves to the device.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--no-cache", is_flag=True, help="Read every file afresh.")
@click.option(
    "--config", type=click.Path(path_type=Path, dir_okay=False), help="A pyproject.toml to use."
)
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Processes to use (default: CPUs).")
@click.option(
    "--force-exclude",
    is_flag=True,
    help="Apply excludes to files named on the command line too (for pre-commit).",
)
@click.option(
    "--stdin-filename",
    help="Read the code from stdin, as this file; with --fix the fixed code goes to stdout.",
)
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Report (and fail on) only findings that are not in this baseline file.",
)
@click.option(
    "--write-baseline",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Record today's findings in this file and exit 0.",
)
@click.option("--add-noqa", is_flag=True, help="Append `# noqa: CODE` to each reported line.")
@click.option(
    "--since",
    metavar="REV",
    help="Report only findings on lines added or changed since the merge base with REV.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
def check(
    paths: tuple[Path, ...],
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    select: str | None,
    extend_select: str | None,
    ignore: str | None,
    extend_ignore: str | None,
    exclude: str | None,
    extend_exclude: str | None,
    per_file_ignores: tuple[str, ...],
    show_settings: bool,
    show_files: bool,
    output_format: str,
    output: Path | None,
    statistics: bool,
    target_device: str | None,
    compile_: bool | None,
    exit_zero: bool,
    no_cache: bool,
    config: Path | None,
    jobs: int | None,
    force_exclude: bool,
    stdin_filename: str | None,
    baseline_file: Path | None,
    write_baseline: Path | None,
    add_noqa: bool,
    since: str | None,
    quiet: bool,
) -> None:
    """Report (and with --fix rewrite) the code that must change for TorchNeuron."""
    from neuron_migrate.api import run
    from neuron_migrate.cli import progress

    _refuse_conflicts(
        ("--add-noqa", add_noqa, "--fix", fix),
        ("--add-noqa", add_noqa, "--diff", diff),
        ("--diff", diff, "--statistics", statistics),
        ("--stdin-filename", stdin_filename is not None, "paths", _named_paths(paths)),
    )
    if any(str(p) == "-" for p in paths):
        # `check -` reads standard input, as ruff does
        if _named_paths(paths):
            _fail("`-` (standard input) cannot be used with other paths")
        stdin_filename = stdin_filename or "-"
        paths = ()
    path_list = list(paths) or [Path(".")]
    if stdin_filename is not None:
        path_list = [Path(stdin_filename)]
    machine = is_machine(output_format)
    try:
        overrides = {
            "select": _codes(select),
            "extend_select": _codes(extend_select),
            "ignore": _codes(ignore),
            "target_device": target_device,
            "compile": compile_,
        }
        overrides.update(
            exclude=_codes(exclude),
            per_file_ignores=_per_file_ignores(per_file_ignores),
        )
        settings = _settings(config, path_list, overrides)
        settings = settings.with_overrides(
            ignore=settings.ignore + (_codes(extend_ignore) or ()),
            extend_exclude=settings.extend_exclude + (_codes(extend_exclude) or ()),
        )
        if show_settings or show_files:
            _show(settings, path_list, show_settings, show_files, force_exclude)
        options = Options(fix=fix and not diff, unsafe_fixes=unsafe_fixes, diff=diff)
        if stdin_filename is not None:
            result = _run_stdin(stdin_filename, settings, options, force_exclude)
            if result is None:
                sys.exit(EXIT_CLEAN)
            if fix and not diff:
                _stdin_fixed(result, unsafe_fixes, exit_zero)
        else:
            shown = not machine and not quiet and output is None and not diff
            bar = progress.bar(enabled=shown)
            try:
                result = run(
                    path_list,
                    settings,
                    options,
                    jobs=jobs,
                    force_exclude=force_exclude,
                    progress=bar,
                    cache=not no_cache,
                )
            except KeyboardInterrupt:
                # every file written so far was replaced whole (write_atomic); the rest are as
                # they were
                bar.close()
                click.echo("neuron-migrate: interrupted; files not reached are unchanged", err=True)
                sys.exit(EXIT_INTERRUPTED)
            finally:
                bar.close()
        all_rules = load_rules(settings.packs)
    except (ConfigError, PackError) as exc:
        _fail(str(exc))
        return
    findings = result.findings
    internal = False
    for file in result.errors:
        internal = internal or file.error.startswith("internal error")
        click.echo(f"{file.path}: {file.error}", err=True)
    nothing = stdin_filename is None and not result.checked and not result.files
    if not quiet:
        for file in result.files:
            for line in file.warnings:
                click.echo(f"warning: {line}", err=True)
        if nothing:
            where = ", ".join(str(p) for p in path_list)
            click.echo(f"warning: no Python files found under {where}", err=True)
    findings = _gates(findings, since, baseline_file, write_baseline, quiet)
    if write_baseline is not None:
        sys.exit(EXIT_ERROR if internal else EXIT_CLEAN)
    if add_noqa:
        from neuron_migrate.adoption.addnoqa import add_noqa as add

        added, problems = add(findings)
        for line in problems:
            click.echo(line, err=True)
        click.echo(f"Added {added} noqa directive{'' if added == 1 else 's'}.", err=True)
        sys.exit(EXIT_ERROR if internal or problems else EXIT_CLEAN)
    if diff:
        changed = [r for r in result.files if r.fixed_source is not None]
        with _sink(output) as out:
            for file in changed:
                out.write(_diff_text(file))
            for target, source in result.would_create:
                out.write(_new_file_diff(target, source))
        if not quiet:
            fixed = sum(r.applied for r in changed)
            click.echo(f"Would fix {fixed} finding(s) in {len(changed)} file(s).", err=True)
        code = (
            EXIT_ERROR if internal else (EXIT_FINDINGS if changed and not exit_zero else EXIT_CLEAN)
        )
        sys.exit(code)
    with _sink(output) as out:
        color = output is None and not machine and _use_color(sys.stdout)
        context = Context(rules=all_rules, unsafe_fixes=unsafe_fixes, color=color)
        if statistics:
            from neuron_migrate.report import statistics as stats

            if output_format in ("json", "json-lines"):
                out.write(stats.render_json(findings, unsafe_fixes))
            else:
                out.write(stats.render_text(findings, unsafe_fixes))
        else:
            if output_format == "junit":
                context.files = result.files
            if output_format == "sarif":
                from neuron_migrate.report.sarif import compute_fixes

                context.fixes = compute_fixes(result.files, settings)
                from neuron_migrate.api import example_runs

                context.examples = example_runs(all_rules, settings.packs)
            out.write(render(output_format, findings, context))
        if not machine and not quiet and not nothing:
            out.write(
                text_summary(findings, unsafe_fixes=unsafe_fixes, fixed=result.fixed, fixing=fix)
            )
        elif machine and fix and not quiet:
            click.echo(f"Fixed {result.fixed} finding(s) ({len(findings)} remaining).", err=True)
        if not quiet:
            for path in result.created:
                click.echo(f"Created {path} (a module the fixes import; review it).", err=True)
    if internal:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _per_file_ignores(values: tuple[str, ...]) -> dict[str, tuple[str, ...]] | None:
    """`GLOB:CODES` options (codes comma-separated; pairs may be comma-separated too, as in
    ruff: `a.py:NM101,b.py:NM2`) as the per-file-ignores table; None when none was given."""
    if not values:
        return None
    table: dict[str, list[str]] = {}
    glob = None
    for value in values:
        for part in (p.strip() for p in value.split(",")):
            if not part:
                continue
            if ":" in part:
                glob, _, code = part.rpartition(":")
                glob = glob.strip()
                part = code.strip()
            if not glob:
                _fail(f"--per-file-ignores {value!r}: expected GLOB:CODES")
            table.setdefault(glob, []).append(part)
        glob = None
    return {g: tuple(codes) for g, codes in table.items()}


def _show(settings, paths: list[Path], show_settings: bool, show_files: bool, force_exclude):
    """--show-settings / --show-files: what the run would use, then exit 0 (ruff's options)."""
    from neuron_migrate.api import enabled_rules
    from neuron_migrate.workspace.discovery import discover

    if show_settings:
        rules = enabled_rules(settings)
        lines = [
            f"Settings for: {', '.join(str(p) for p in paths)}",
            f"config file: {settings.config_path or '(none: defaults)'}",
            f"project root: {settings.root}",
            # no select: the default packs (opt-in packs are off)
            f"select = {list(settings.select) if settings.select is not None else 'default'}",
            f"extend-select = {list(settings.extend_select)}",
            f"ignore = {list(settings.ignore)}",
            f"per-file-ignores = {dict((k, list(v)) for k, v in settings.per_file_ignores.items())}",
            f"exclude = {list(settings.exclude)}",
            f"extend-exclude = {list(settings.extend_exclude)}",
            f"target-device = {settings.target_device!r}",
            f"compile = {str(settings.compile).lower()}",
            f"packs = {list(settings.packs)}",
            f"enabled rules ({len(rules)}): {', '.join(r.code for r in rules)}",
        ]
        click.echo("\n".join(lines))
    if show_files:
        for found in discover(paths, settings, force_exclude=force_exclude):
            if found.problem is None:
                click.echo(os.path.relpath(found.path) if found.path.is_absolute() else found.path)
    sys.exit(EXIT_CLEAN)


def _named_paths(paths: tuple[Path, ...]) -> bool:
    """Paths other than `-` (standard input)."""
    return any(str(p) != "-" for p in paths)


def _refuse_conflicts(*pairs: tuple[str, bool, str, bool]) -> None:
    """Options that cannot be used together are a usage error (exit 2), as in ruff."""
    for first, has_first, second, has_second in pairs:
        if has_first and has_second:
            _fail(f"{first} cannot be used with {second}")


class _Sink:
    """Where a report goes: stdout (through click, for colour handling) or a file."""

    def __init__(self, output: Path | None):
        self.output = output
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def __enter__(self) -> _Sink:
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is not None:
            return
        data = "".join(self.parts)
        if self.output is None:
            click.echo(data, nl=False, color=True if "\x1b[" in data else None)  # styled = tty
            return
        try:
            self.output.parent.mkdir(parents=True, exist_ok=True)
            self.output.write_text(data, encoding="utf-8")
        except OSError as exc:
            _fail(f"{self.output}: cannot write the report: {exc.strerror or exc}")


def _sink(output: Path | None) -> _Sink:
    return _Sink(output)


def _diff_text(file) -> str:
    from difflib import unified_diff

    from neuron_migrate.workspace import filekinds

    if filekinds.kind_of(file.path) == "notebook":
        from neuron_migrate.checkers.notebook import cell_diff

        return cell_diff(file.original_source, file.fixed_source, file.path)
    return "".join(
        unified_diff(
            file.original_source.splitlines(keepends=True),
            file.fixed_source.splitlines(keepends=True),
            fromfile=file.path,
            tofile=file.path,
        )
    )


def _new_file_diff(path: Path, source: str) -> str:
    """A module a fix would create, as a diff from nothing (the form `git diff` uses)."""
    from difflib import unified_diff

    shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
    return "".join(
        unified_diff([], source.splitlines(keepends=True), fromfile="/dev/null", tofile=shown)
    )


def _gates(findings, since, baseline_file, write_baseline, quiet):
    """--since, then --write-baseline / --baseline: which findings the run reports (git and
    the baseline's modules are loaded only for a run that asks for them)."""
    if since is None and baseline_file is None and write_baseline is None:
        return findings
    from neuron_migrate.adoption.baseline import BaselineError
    from neuron_migrate.adoption.since import GitError

    try:
        return _gated(findings, since, baseline_file, write_baseline, quiet)
    except (GitError, BaselineError) as exc:
        _fail(str(exc))
        return findings


def _gated(findings, since, baseline_file, write_baseline, quiet):
    if since is not None:
        from neuron_migrate.adoption.since import changes_since, filter_findings
        from neuron_migrate.checkers.notebook import json_line_of_finding

        changes = changes_since(since, Path.cwd())
        findings = filter_findings(findings, changes, json_line_of_finding)
    if write_baseline is not None:
        from neuron_migrate.adoption import baseline

        count = baseline.write(write_baseline, findings)
        click.echo(f"Wrote {count} finding(s) to the baseline {write_baseline}.", err=True)
        return findings
    if baseline_file is not None:
        from neuron_migrate.adoption import baseline

        findings, matched = baseline.new_findings(findings, baseline_file)
        if matched and not quiet:
            click.echo(f"{matched} finding(s) in the baseline {baseline_file} left out.", err=True)
    return findings


def _run_stdin(name: str, settings: Settings, options: Options, force_exclude: bool):
    """Check the code on stdin as the file `name`; None when --force-exclude excludes it
    (with --fix the input is then passed through unchanged)."""
    from neuron_migrate.api import RunResult, run_source
    from neuron_migrate.checkers.base import problem
    from neuron_migrate.checkers.textio import DecodeProblem, decode
    from neuron_migrate.model import FileResult
    from neuron_migrate.workspace.discovery import is_excluded

    data = sys.stdin.buffer.read()
    if force_exclude and is_excluded(Path(name), settings):
        if options.fix:
            sys.stdout.buffer.write(data)
        return None
    try:
        text = decode(data).text
    except DecodeProblem as exc:
        return RunResult([FileResult(name, findings=[problem(name, str(exc))])])
    file = run_source(text, name, settings, options)
    if file.fixed_source is None:
        file.original_source = text
    return RunResult([file])


def _stdin_fixed(result, unsafe_fixes: bool, exit_zero: bool) -> None:
    """--fix on stdin: the fixed code (or the input, unchanged) to stdout; what is left to
    stderr."""
    from neuron_migrate.report import text

    file = result.files[0]
    code = file.fixed_source if file.fixed_source is not None else (file.original_source or "")
    sys.stdout.write(code)
    sys.stdout.flush()
    remaining = result.findings
    for line in file.warnings:
        click.echo(f"warning: {line}", err=True)
    if remaining:
        click.echo(text.render(remaining, unsafe_fixes=unsafe_fixes, show_source=False), err=True)
    if file.error:
        click.echo(f"{file.path}: {file.error}", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if remaining and not exit_zero else EXIT_CLEAN)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["markdown", "html", "csv"]),
    default="markdown",
    show_default=True,
)
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the report to this file instead of stdout.",
)
@click.option("--select", help="Rules to count: codes, prefixes (NM2, NM), names or ALL.")
@click.option("--ignore", help="Rules to leave out.")
@click.option(
    "--target-device",
    type=click.Choice(TARGET_DEVICES, case_sensitive=False),
    help="Device the fixes write: neuron (default), cpu or cuda.",
)
@click.option(
    "--config", type=click.Path(path_type=Path, dir_okay=False), help="A pyproject.toml to use."
)
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Processes to use (default: CPUs).")
def report(
    paths: tuple[Path, ...],
    output_format: str,
    output: Path | None,
    select: str | None,
    ignore: str | None,
    target_device: str | None,
    config: Path | None,
    jobs: int | None,
) -> None:
    """Migration readiness: what --fix / --unsafe-fixes resolve, per rule and file; blockers."""
    from neuron_migrate.report import csv_format, html, markdown, readiness

    path_list = list(paths) or [Path(".")]
    try:
        overrides = {
            "select": _codes(select),
            "ignore": _codes(ignore),
            "target_device": target_device,
        }
        settings = _settings(config, path_list, overrides)
        measured = readiness.build(path_list, settings, jobs=jobs)
    except (ConfigError, PackError) as exc:
        _fail(str(exc))
        return
    renderer = {"markdown": markdown, "html": html, "csv": csv_format}[output_format]
    for line in measured.problems:
        click.echo(line, err=True)
    with _sink(output) as out:
        out.write(renderer.render(measured))


@main.command()
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "markdown"]),
    default="text",
    show_default=True,
)
@click.option(
    "--config", type=click.Path(path_type=Path, dir_okay=False), help="A pyproject.toml to use."
)
def rules(output_format: str, config: Path | None) -> None:
    """List every rule: code, name, pack, severity and fix."""
    from neuron_migrate.packs import docs

    try:
        settings = load_settings(config, Path.cwd())
        all_rules = load_rules(settings.packs)
    except (ConfigError, PackError) as exc:
        _fail(str(exc))
        return
    if output_format == "markdown":
        from neuron_migrate.api import example_runs

        table = docs.markdown_table(all_rules, example_runs(all_rules, settings.packs))
    else:
        table = docs.plain_table(all_rules)
    click.echo(table, nl=False)


@main.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain a rule: what it reports (as printed for its examples), why, every example, the
    fix and its safety, the source."""
    try:
        all_rules = load_rules()
    except PackError as exc:
        _fail(str(exc))
        return
    wanted = code.strip()
    for rule in all_rules:
        if wanted.upper() == rule.code or wanted == rule.name:
            from neuron_migrate.api import rule_page

            click.echo(rule_page(rule), nl=False)
            return
    _fail(f"unknown rule `{code}`; `neuron-migrate rules` lists them")


@main.command()
@click.option(
    "--config", type=click.Path(path_type=Path, dir_okay=False), help="A pyproject.toml to use."
)
def clean(config: Path | None) -> None:
    """Remove the cache (.neuron_migrate_cache/ at the project root) and the parsed rule packs
    kept in the per-user cache folder (~/.cache/neuron-migrate)."""
    from neuron_migrate.packs import store
    from neuron_migrate.workspace import cache

    try:
        settings = load_settings(config, Path.cwd())
    except ConfigError as exc:
        _fail(str(exc))
        return
    removed = cache.clean(settings.root)
    folder, packs = store.clean()
    if removed:
        click.echo(f"Removed {settings.root / cache.FOLDER}")
    if packs:
        click.echo(f"Removed the parsed rule packs from {folder}")
    if not removed and not packs:
        click.echo("No cache to remove.")


@main.command()
def server() -> None:
    """Run the language server (LSP over stdin/stdout) for editors."""
    from neuron_migrate.server import serve

    serve()
