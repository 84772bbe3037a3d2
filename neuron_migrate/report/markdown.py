"""`neuron-migrate report --format markdown`: the readiness report as GitHub-flavoured Markdown."""

from __future__ import annotations

from neuron_migrate.report.readiness import Readiness, Row


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(rows: list[Row], first: str, extra: bool) -> list[str]:
    head = f"| {first} |" + (" pack | severity |" if extra else "")
    head += " findings | auto-fixable (safe) | auto-fixable (unsafe) | manual |"
    sep = "|---|" + ("---|---|" if extra else "") + "---:|---:|---:|---:|"
    out = [head, sep]
    for r in rows:
        name = f"{r.name} `{r.title}`" if r.title else f"`{_cell(r.name)}`"
        line = f"| {name} |" + (f" {r.pack} | {r.severity} |" if extra else "")
        out.append(line + f" {r.findings} | {r.safe} | {r.unsafe} | {r.manual} |")
    return out


def render(report: Readiness) -> str:
    out = ["# TorchNeuron migration readiness", "", f"**{report.headline}**", ""]
    out += [
        f"- findings: {report.findings}; resolved by `--fix`: {report.resolved_by_fix} "
        f"({report.fix_share:.0f}%); with `--unsafe-fixes`: {report.resolved_by_unsafe} "
        f"({report.unsafe_share:.0f}%); by hand: {report.manual}",
        f"- files checked: {report.files_checked}; with errors now: {report.files_with_errors}; "
        f"free of errors after `--fix`: {report.files_free_after_fix} "
        f"({report.files_fix_share:.0f}%), after `--unsafe-fixes`: "
        f"{report.files_free_after_unsafe} ({report.files_unsafe_share:.0f}%)",
        f"- blockers (errors no fix resolves): {report.blocker_count}",
        "",
        "## Per pack",
        "",
        *_table(report.packs, "pack", False),
        "",
        "## Per rule",
        "",
        *_table(report.rules, "rule", True),
        "",
        "## Per file",
        "",
        *_table(report.files, "file", False),
        "",
        "## Blockers",
        "",
    ]
    if not report.blockers:
        out.append("None: every error has a fix.")
    for group in report.blockers:
        files = len(group.files)
        out += [
            f"### {group.code} `{group.name}`: {group.count} in {files} "
            f"file{'' if files == 1 else 's'}",
            "",
            f"What to do: {group.instruction}",
            "",
            f"For example: {group.message}",
            "",
        ]
        out += [f"- `{_cell(b.path)}`: {', '.join(b.places)}" for b in group.files]
        out.append("")
    if report.problems:
        out += ["## Files not fully read", ""] + [f"- {p}" for p in report.problems]
    return "\n".join(out).rstrip("\n") + "\n"
