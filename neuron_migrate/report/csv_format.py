"""`neuron-migrate report --format csv`: one table; `section` says what a row counts
(total, pack, rule, file, blocker)."""

from __future__ import annotations

import csv
import io

from neuron_migrate.report.readiness import Readiness

COLUMNS = [
    "section",
    "name",
    "title",
    "pack",
    "severity",
    "findings",
    "safe",
    "unsafe",
    "manual",
    "location",
    "message",
    "instruction",
]


def render(report: Readiness) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerow(
        {
            "section": "total",
            "name": "readiness",
            "findings": report.findings,
            "safe": report.resolved_by_fix,
            "unsafe": report.resolved_by_unsafe - report.resolved_by_fix,
            "manual": report.findings - report.resolved_by_unsafe,
            "message": report.headline,
        }
    )
    for section, rows in (("pack", report.packs), ("rule", report.rules), ("file", report.files)):
        for r in rows:
            writer.writerow(
                {
                    "section": section,
                    "name": r.name,
                    "title": r.title,
                    "pack": r.pack,
                    "severity": r.severity,
                    "findings": r.findings,
                    "safe": r.safe,
                    "unsafe": r.unsafe,
                    "manual": r.manual,
                }
            )
    for b in report.blockers:
        writer.writerow(
            {
                "section": "blocker",
                "name": b.code,
                "title": b.name,
                "severity": "error",
                "location": b.location,
                "message": b.message,
                "instruction": b.instruction,
            }
        )
    return buffer.getvalue()
