"""`--format junit`: JUnit XML (GitLab, Jenkins, Azure): one testsuite per file, one failing
testcase per finding, and one passing testcase for a file without findings."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from neuron_migrate.model import FileResult, Finding


def render(findings: list[Finding], files: list[FileResult] | None = None) -> str:
    by_file: dict[str, list[Finding]] = {
        path: list(group) for path, group in groupby(findings, key=lambda f: f.path)
    }
    clean = sorted({r.path for r in files or ()} - set(by_file))
    root = ET.Element(
        "testsuites",
        name="neuron-migrate",
        tests=str(len(findings) + len(clean)),
        failures=str(len(findings)),
        errors="0",
    )
    for path in sorted(set(by_file) | set(clean)):
        items = by_file.get(path, [])
        suite = ET.SubElement(
            root,
            "testsuite",
            name=path,
            tests=str(max(1, len(items))),
            failures=str(len(items)),
            errors="0",
            skipped="0",
        )
        if not items:
            ET.SubElement(suite, "testcase", name="neuron-migrate", classname=path)
            continue
        for finding in items:
            where = finding.location
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"{finding.code} {finding.name} ({where})",
                classname=path,
                file=path,
                line=str(finding.span.line),
            )
            failure = ET.SubElement(
                case,
                "failure",
                message=f"{finding.code} {finding.message}",
                type=finding.severity.value,
            )
            failure.text = f"{where}: {finding.code} {finding.message}"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"
