"""The command line: a thin layer over runner.run (options -> Settings -> run -> reporter)."""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

import click

from neuron_migrate import __version__
from neuron_migrate.engine.pipeline import Options
from neuron_migrate.packs import PackError, load_rules
from neuron_migrate.settings import ConfigError, Settings, load_settings

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


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
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
@click.option("--target-device", help="Device the fixes write: neuron (default), cpu, cuda, ...")
@click.option(
    "--compile/--no-compile", "compile_", default=None, help="Let NM205 insert torch.compile."
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--no-cache", is_flag=True, help="Read every file afresh.")
@click.option(
    "--config", type=click.Path(path_type=Path, dir_okay=False), help="A pyproject.toml to use."
)
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Processes to use (default: CPUs).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
def check(
    paths: tuple[Path, ...],
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    select: str | None,
    extend_select: str | None,
    ignore: str | None,
    output_format: str,
    target_device: str | None,
    compile_: bool | None,
    exit_zero: bool,
    no_cache: bool,
    config: Path | None,
    jobs: int | None,
    quiet: bool,
) -> None:
    """Report (and with --fix rewrite) the code that must change for TorchNeuron."""
    from neuron_migrate.report import json_format, text
    from neuron_migrate.runner import run

    path_list = list(paths) or [Path(".")]
    try:
        overrides = {
            "select": _codes(select),
            "extend_select": _codes(extend_select),
            "ignore": _codes(ignore),
            "target_device": target_device,
            "compile": compile_,
        }
        settings = _settings(config, path_list, overrides)
        options = Options(fix=fix and not diff, unsafe_fixes=unsafe_fixes, diff=diff)
        result = run(path_list, settings, options, jobs=jobs)
    except (ConfigError, PackError) as exc:
        _fail(str(exc))
        return
    findings = result.findings
    internal = False
    for file in result.errors:
        internal = internal or file.error.startswith("internal error")
        click.echo(f"{file.path}: {file.error}", err=True)
    out = sys.stdout
    if diff:
        changed = [r for r in result.files if r.fixed_source is not None]
        for file in changed:
            click.echo(
                "".join(
                    difflib.unified_diff(
                        file.original_source.splitlines(keepends=True),
                        file.fixed_source.splitlines(keepends=True),
                        fromfile=file.path,
                        tofile=file.path,
                    )
                ),
                nl=False,
            )
        if not quiet:
            fixed = sum(r.applied for r in changed)
            click.echo(f"Would fix {fixed} finding(s) in {len(changed)} file(s).", err=True)
        code = (
            EXIT_ERROR if internal else (EXIT_FINDINGS if changed and not exit_zero else EXIT_CLEAN)
        )
        sys.exit(code)
    if output_format == "json":
        sources = {r.code: r.source for r in load_rules(settings.packs)}
        click.echo(json_format.render(findings, sources), nl=False)
    else:
        color = _use_color(out)
        click.echo(
            text.render(findings, unsafe_fixes=unsafe_fixes, color=color), nl=False, color=color
        )
        if not quiet:
            click.echo(
                text.summary(findings, unsafe_fixes=unsafe_fixes, fixed=result.fixed, fixing=fix),
                nl=False,
            )
    if internal:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


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
    from neuron_migrate import docs

    try:
        settings = load_settings(config, Path.cwd())
        all_rules = load_rules(settings.packs)
    except (ConfigError, PackError) as exc:
        _fail(str(exc))
        return
    table = (
        docs.markdown_table(all_rules)
        if output_format == "markdown"
        else docs.plain_table(all_rules)
    )
    click.echo(table, nl=False)


@main.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain a rule: what it finds, why, an example, the fix and its safety, the source."""
    from neuron_migrate import docs

    try:
        all_rules = load_rules()
    except PackError as exc:
        _fail(str(exc))
        return
    wanted = code.strip()
    for rule in all_rules:
        if wanted.upper() == rule.code or wanted == rule.name:
            click.echo(docs.explain(rule), nl=False)
            return
    _fail(f"unknown rule `{code}`; `neuron-migrate rules` lists them")
