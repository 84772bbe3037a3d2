"""NM905 unsupported-instance: instance types of the families TorchNeuron does not run on."""

from __future__ import annotations

import re
from functools import lru_cache

from neuron_migrate.checkers.project.api import Context, Line, Report, checks


@lru_cache(maxsize=8)
def _instance_type(families: tuple[str, ...]) -> re.Pattern[str]:
    """`trn1.32xlarge`, `ml.trn1.2xlarge` (SageMaker), `inf2.metal`; not `my.trn1.bucket`."""
    names = "|".join(re.escape(f) for f in sorted(families, key=len, reverse=True))
    return re.compile(rf"(?<![\w.-])(?:ml\.)?(?:{names})\.(?:\d*xlarge|metal)\b")


@checks("line")
def check(line: Line, ctx: Context) -> list[Report]:
    case = ctx.case("instance-type")
    return [
        ctx.report(line, case, at=line.part(found.start(), found.end()), instance=found.group())
        for found in _instance_type(case.names).finditer(line.text)
    ]
