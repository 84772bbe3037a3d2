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
    """Every count row adds up: the total row is the sum of the rule rows (and of the pack and
    file rows); a `blocker-rule` row gives a rule's instruction once, its `blocker` rows one
    file each with the places in `location`."""
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
            "manual": report.manual,
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
    for group in report.blockers:
        writer.writerow(
            {
                "section": "blocker-rule",
                "name": group.code,
                "title": group.name,
                "severity": "error",
                "findings": group.count,
                "manual": group.count,
                "message": group.message,
                "instruction": group.instruction,
            }
        )
        for file in group.files:
            writer.writerow(
                {
                    "section": "blocker",
                    "name": group.code,
                    "title": group.name,
                    "severity": "error",
                    "findings": len(file.places),
                    "manual": len(file.places),
                    "location": f"{file.path}:" + " ".join(file.places),
                }
            )
    return buffer.getvalue()
