"""Output formats: one module per format, each a function of the findings (and the rules).

`render(name, ...)` picks the module; human formats are `full` (alias `text`) and `concise`,
everything else is a machine format that never carries a summary or other human text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from neuron_migrate.model import FileResult, Finding
from neuron_migrate.packs.loader import Rule

HUMAN_FORMATS = ("text", "full", "concise")
MACHINE_FORMATS = ("json", "json-lines", "github", "junit", "sarif")
FORMATS = HUMAN_FORMATS + MACHINE_FORMATS


@dataclass
class Context:
    """What a reporter may use besides the findings."""

    rules: tuple[Rule, ...] = ()
    unsafe_fixes: bool = False
    color: bool = False
    # every file read (clean ones too), for formats that list passes (junit)
    files: list[FileResult] = field(default_factory=list)
    # path -> (original text, text with every fix applied), for formats that carry fixes (sarif)
    fixes: dict[str, tuple[str, str]] = field(default_factory=dict)
    # rule code -> what `check` prints for the rule's examples, for rule help (sarif)
    examples: dict[str, tuple] = field(default_factory=dict)

    def sources(self) -> dict[str, str]:
        return {r.code: r.source for r in self.rules}


def is_machine(name: str) -> bool:
    return name in MACHINE_FORMATS


def render(name: str, findings: list[Finding], context: Context) -> str:
    if name in ("text", "full", "concise"):
        from neuron_migrate.report import text

        return text.render(
            findings,
            unsafe_fixes=context.unsafe_fixes,
            show_source=name != "concise",
            color=context.color,
        )
    if name == "json":
        from neuron_migrate.report import json_format

        return json_format.render(findings, context.sources())
    if name == "json-lines":
        from neuron_migrate.report import json_lines

        return json_lines.render(findings, context.sources())
    if name == "github":
        from neuron_migrate.report import github

        return github.render(findings)
    if name == "junit":
        from neuron_migrate.report import junit

        return junit.render(findings, context.files)
    if name == "sarif":
        from neuron_migrate.report import sarif

        return sarif.render(findings, context.rules, context.fixes, context.examples)
    raise ValueError(f"unknown format {name!r}")
