"""The docs say what the tool says (issue 11, items 8 and 9).

Every `explain` page, the README rule table and SARIF's rule help state the message `check`
prints for the page's own examples. These tests run each example through the checker on their
own (not through `api.example_runs`, which the pages use) and compare.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from neuron_migrate.api import example_runs
from neuron_migrate.cli.app import main
from neuron_migrate.packs import docs
from neuron_migrate.packs.loader import load_rules
from neuron_migrate.packs.vocabulary import MESSAGE_PLACEHOLDERS
from neuron_migrate.report import sarif
from tests.conftest import run_code
from tests.test_readme import current_table

RULES = load_rules()
RUNS = example_runs(RULES)
# a placeholder left in a text: {name}, {arg0}, a "…" filler, or the generic values the old
# pages used (`index(...)`, `index.step()`, backend="openxla" for a call that had none)
PLACEHOLDER_RE = re.compile(r"\{[a-z_0-9]+\}|…|`index[.(]")
# a name said twice: "`torch_xla` (torch_xla)", "`torch.sparse` is torch.sparse"
REPEATED_RE = re.compile(r"`([\w.]+)` (?:\(`?\1`?\)|is \1\b)")


def _example_settings(example) -> dict:
    s = example.settings
    return {
        "target": s.get("target-device", "neuron"),
        "compile": bool(s.get("compile", False)),
        "filename": example.file,
        "dedent": False,
    }


def _printed(rule, example) -> list[tuple[int, str]]:
    """What `check` reports for the rule on one example, run directly (an opt-in pack's
    examples with every pack on)."""
    select = None if rule.default else ("ALL",)
    result = run_code(example.before, select=select, **_example_settings(example))
    return [(f.span.line, f.message) for f in result.findings if f.code == rule.code]


def _cases():
    for rule in RULES:
        for index, example in enumerate(rule.examples):
            yield pytest.param(rule, index, example, id=f"{rule.code}-example{index + 1}")


@pytest.mark.parametrize(("rule", "index", "example"), list(_cases()))
def test_explain_shows_what_check_prints(rule, index, example):
    printed = _printed(rule, example)
    assert printed, f"{rule.code}'s example {index + 1} is not reported"
    page = docs.explain(rule, RUNS[rule.code])
    for line, message in printed:
        assert f"- line {line}: {message}" in page
        assert not PLACEHOLDER_RE.search(message), message
        assert not REPEATED_RE.search(message), message
    # every example is on the page, not only the first two
    assert example.before.strip("\n").splitlines()[0] in page


@pytest.mark.slow
def test_check_on_the_command_line_prints_what_the_pages_say():
    """The same comparison through the real `check` command (JSON output, from stdin)."""
    for rule in RULES:
        page = docs.explain(rule, RUNS[rule.code])
        for example in rule.examples:
            args = ["check", "--stdin-filename", example.file, "--format", "json", "--no-cache"]
            if example.settings.get("target-device"):
                args += ["--target-device", example.settings["target-device"]]
            if example.settings.get("compile"):
                args.append("--compile")
            if not rule.default:
                args += ["--select", "ALL"]
            result = CliRunner().invoke(main, args, input=example.before)
            findings = [f for f in json.loads(result.output) if f["code"] == rule.code]
            assert findings, (rule.code, result.output)
            for finding in findings:
                line = finding["line"]
                assert f"- line {line}: {finding['message']}" in page, (rule.code, finding)


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_page_starts_with_the_first_example_message(rule):
    page = docs.explain(rule, RUNS[rule.code])
    first = _printed(rule, rule.examples[0])[0][1]
    assert page.split("## What it reports\n", 1)[1].startswith(first + "\n")
    assert not PLACEHOLDER_RE.search(page.split("## Why")[0]), page


def test_readme_table_states_the_printed_messages():
    table = current_table()
    for rule in RULES:
        first = _printed(rule, rule.examples[0])[0][1]
        row = next(r for r in table.splitlines() if r.startswith(f"| {rule.code} |"))
        assert row.endswith("| " + first.replace("|", "\\|") + " |"), row
    assert not PLACEHOLDER_RE.search(table)


def test_sarif_rule_help_states_the_printed_messages():
    document = json.loads(sarif.render([], RULES, {}, RUNS))
    entries = {r["id"]: r for r in document["runs"][0]["tool"]["driver"]["rules"]}
    for rule in RULES:
        first = _printed(rule, rule.examples[0])[0][1]
        entry = entries[rule.code]
        assert entry["shortDescription"]["text"] == first
        assert entry["help"]["text"].startswith(first)
        assert entry["help"]["markdown"] == docs.explain(rule, RUNS[rule.code])
        assert not PLACEHOLDER_RE.search(entry["shortDescription"]["text"])


def test_sarif_from_the_command_line_carries_the_example_messages(tmp_path):
    from tests.test_cli import invoke

    script = tmp_path / "train.py"
    script.write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\n")
    result = invoke("check", str(script), "--format", "sarif", "--no-cache")
    document = json.loads(result.output)
    entries = {r["id"]: r for r in document["runs"][0]["tool"]["driver"]["rules"]}
    assert entries["NM308"]["shortDescription"]["text"].startswith("`xm.optimizer_step(optimizer)`")


def test_explain_nm308_names_the_call_as_written():
    from tests.test_cli import invoke

    page = invoke("explain", "NM308").output
    assert "`xm.optimizer_step(optimizer)`" in page
    assert "index.step()" not in page and 'backend="openxla"' not in page


def test_an_example_says_when_other_rules_also_change_it():
    rule = next(r for r in RULES if r.code == "NM603")
    page = docs.explain(rule, RUNS["NM603"])
    assert "Only NM603's change is shown; NM101 (xla-device) would also change this code." in page


# ---- item 9: the call as written, and no fix that cannot run -------------------------------


def test_message_shows_the_call_with_its_arguments():
    code = "import torch_xla.core.xla_model as xm\ndev = xm.xla_device(1)\n"
    (finding,) = [f for f in run_code(code).findings if f.code == "NM101"]
    assert "`xm.xla_device(1)`" in finding.message


@pytest.mark.parametrize(
    "argument", ['"foo"', "1.5", "[0]", "True", 'f"{rank}"', "(0, 1)", "lambda: 0"]
)
def test_no_fix_writes_a_device_index_that_cannot_run(argument):
    code = f"import torch_xla.core.xla_model as xm\ndev = xm.xla_device({argument})\n"
    result = run_code(code, fix=True, unsafe=True)
    written = result.fixed_source or code
    assert "torch.device(" not in written, written
    (finding,) = [f for f in result.findings if f.code == "NM101"]
    assert finding.fix is None
    assert f"`xm.xla_device({argument})`" in finding.message


def test_an_index_argument_follows_the_torchrun_examples():
    code = "import torch_xla.core.xla_model as xm\ndev = xm.xla_device(n=local_rank)\n"
    result = run_code(code, fix=True, unsafe=True)
    assert 'dev = torch.device("neuron")\n' in result.fixed_source


# ---- placeholders a message may use whatever the code looks like ----------------------------

# what every finding has (packs/vocabulary.py), plus what one kind of finding always has
# (project data cases fill {pin}, {value} and {command}, CONTRIBUTING.md, "Adding a project-file rule")
ALWAYS = set(MESSAGE_PLACEHOLDERS) | {"target", "receiver", "item", "pin", "value", "command"}


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_messages_use_only_placeholders_every_finding_has(rule):
    if rule.module is not None:
        pytest.skip("a code rule fills its own placeholders (its examples run through check)")
    templates = [rule.message] + [p.message for p in rule.patterns if p.message]
    for template in templates:
        used = set(re.findall(r"\{([a-z_0-9]+)\}", template))
        extra = {u for u in used - ALWAYS if not u.startswith("glob")}
        assert not extra, (rule.code, extra, template)


def test_a_keyword_only_call_prints_no_placeholder():
    code = (
        "import torch_xla.core.xla_model as xm\n"
        "import torch_xla.distributed.xla_multiprocessing as xmp\n"
        "xm.optimizer_step(optimizer=opt)\n"
        "xm.add_step_closure(closure=report)\n"
        "xmp.spawn(fn=main, args=())\n"
    )
    for finding in run_code(code).findings:
        assert not PLACEHOLDER_RE.search(finding.message), finding.message
