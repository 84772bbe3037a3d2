"""`--format json-lines`: one JSON object per finding and line (the keys of `--format json`)."""

from __future__ import annotations

import json

from neuron_migrate.model import Finding
from neuron_migrate.report.json_format import finding_dict


def render(findings: list[Finding], sources: dict[str, str]) -> str:
    return "".join(json.dumps(finding_dict(f, sources)) + "\n" for f in findings)
