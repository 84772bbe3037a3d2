"""`neuron-migrate report --format html`: one self-contained page (inline CSS and SVG, no
script, nothing loaded from the network) with a chart of findings per pack."""

from __future__ import annotations

from html import escape

from neuron_migrate.report.readiness import Blockers, Readiness, Row

_COLOURS = {"safe": "#2e7d32", "unsafe": "#f9a825", "manual": "#c62828"}

_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 70rem;
       padding: 0 1rem; color: #1a1a1a; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
.headline { font-size: 1.15rem; background: #f1f5f9; border-left: 4px solid #1565c0;
            padding: .6rem 1rem; }
.figures { display: flex; gap: 1rem; flex-wrap: wrap; }
.figure { border: 1px solid #d0d7de; border-radius: 6px; padding: .6rem 1rem; min-width: 12rem; }
.figure b { display: block; font-size: 1.6rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { border-bottom: 1px solid #e5e7eb; padding: .3rem .5rem; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
code { font: 13px ui-monospace, monospace; background: #f6f8fa; padding: 0 .2rem; }
.legend span { display: inline-block; width: .8rem; height: .8rem; margin: 0 .3rem 0 1rem; }
td:first-child { overflow-wrap: anywhere; }
details { border: 1px solid #d0d7de; border-radius: 6px; padding: .4rem .8rem; margin: .5rem 0; }
summary { cursor: pointer; }
table.c1 td:nth-child(n+2), table.c3 td:nth-child(n+4) { text-align: right;
  font-variant-numeric: tabular-nums; }
table.blockers td { font: 13px ui-monospace, monospace; overflow-wrap: anywhere; }
table.blockers td:nth-child(2), table.blockers th:nth-child(2) { text-align: right; }
table.blockers td:first-child { width: 45%; }
"""


def _chart(rows: list[Row]) -> str:
    """A horizontal stacked bar per pack: safe, unsafe, manual."""
    if not rows:
        return "<p>No findings.</p>"
    biggest = max(r.findings for r in rows) or 1
    width, bar, label = 640, 22, 130
    height = len(rows) * (bar + 10) + 10
    parts = [
        f'<svg role="img" aria-label="findings per pack" width="{width + label + 60}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, r in enumerate(rows):
        y = 10 + i * (bar + 10)
        parts.append(
            f'<text x="{label - 8}" y="{y + bar - 6}" text-anchor="end" '
            f'font-size="13">{escape(r.name)}</text>'
        )
        x = label
        for kind in ("safe", "unsafe", "manual"):
            n = getattr(r, kind)
            if not n:
                continue
            w = max(1, round(width * n / biggest))
            parts.append(
                f'<rect x="{x}" y="{y}" width="{w}" height="{bar}" fill="{_COLOURS[kind]}">'
                f"<title>{escape(r.name)}: {n} {kind}</title></rect>"
            )
            x += w
        parts.append(f'<text x="{x + 6}" y="{y + bar - 6}" font-size="13">{r.findings}</text>')
    parts.append("</svg>")
    legend = "".join(f'<span style="background:{c}"></span>{k}' for k, c in _COLOURS.items())
    return "".join(parts) + f'<div class="legend">{legend}</div>'


def _table(rows: list[Row], first: str, extra: bool) -> str:
    head = f"<tr><th>{first}</th>" + ("<th>pack</th><th>severity</th>" if extra else "")
    head += (
        '<th class="n">findings</th><th class="n">auto-fixable (safe)</th>'
        '<th class="n">auto-fixable (unsafe)</th><th class="n">manual</th></tr>'
    )
    body = []
    for r in rows:
        name = f"{escape(r.name)} <code>{escape(r.title)}</code>" if r.title else escape(r.name)
        cells = f"<td>{name}"
        if extra:
            cells += f"<td>{escape(r.pack)}<td>{escape(r.severity)}"
        # the counts are right-aligned by the table's class; end tags are optional
        cells += "".join(f"<td>{v}" for v in (r.findings, r.safe, r.unsafe, r.manual))
        body.append(f"<tr>{cells}")
    counts = 3 if extra else 1
    return f'<table class="counts c{counts}">{head}{"".join(body)}</table>'


def _md_code(text: str) -> str:
    """`code` spans of the messages as <code>; everything else escaped."""
    pieces = escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(pieces))


def _blocker_group(group: Blockers) -> str:
    """One rule's blockers: its instruction once, then a row per file with the places."""
    files = len(group.files)
    # end tags a table row may omit are omitted: thousands of rows on a large tree
    rows = "".join(
        f"<tr><td>{escape(b.path)}<td>{len(b.places)}<td>{escape(', '.join(b.places))}"
        for b in group.files
    )
    return (
        f"<details><summary><b>{escape(group.code)}</b> <code>{escape(group.name)}</code>: "
        f"{group.count} in {files} file{'' if files == 1 else 's'}</summary>"
        f"<p>What to do: {_md_code(group.instruction)}</p>"
        f"<p>For example: {_md_code(group.message)}</p>"
        '<table class="blockers"><tr><th>file<th>blockers<th>line:column'
        f"{rows}</table></details>"
    )


def render(report: Readiness) -> str:
    figures = [
        (f"{report.fix_share:.0f}%", f"of {report.findings} findings resolved by --fix"),
        (f"{report.unsafe_share:.0f}%", "resolved with --unsafe-fixes"),
        (
            f"{report.files_fix_share:.0f}%",
            f"of {report.files_checked} files free of errors after --fix",
        ),
        (f"{report.blocker_count}", "blockers (errors no fix resolves)"),
    ]
    blockers = "".join(_blocker_group(group) for group in report.blockers)
    problems = "".join(f"<li>{escape(p)}</li>" for p in report.problems)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>TorchNeuron migration readiness</title>
<style>{_CSS}</style>
</head>
<body>
<h1>TorchNeuron migration readiness</h1>
<p class="headline">{_md_code(report.headline)}</p>
<div class="figures">{"".join(f'<div class="figure"><b>{v}</b>{escape(t)}</div>' for v, t in figures)}</div>
<h2>Findings per pack</h2>
{_chart(report.packs)}
<h2>Per rule</h2>
{_table(report.rules, "rule", True)}
<h2>Per file</h2>
{_table(report.files, "file", False)}
<h2>Blockers</h2>
{blockers or "<p>None: every error has a fix.</p>"}
{f"<h2>Files not fully read</h2><ul>{problems}</ul>" if problems else ""}
<p><small>Generated by neuron-migrate. Readiness is measured by running the fixes without
writing them.</small></p>
</body>
</html>
"""
