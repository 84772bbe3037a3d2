"""Create a new rule's file with every field and an example that fails until it is filled in.

    python scripts/new_rule.py PACK CODE NAME [--code-rule] [--rules-dir DIR]
    python scripts/new_rule.py xla NM321 xla-barrier

writes rules/<PACK>/<CODE>_<name>.toml (rules/xla/NM321_xla_barrier.toml), which loads, validates
against rules/rule.schema.json, and makes `pytest tests/test_rule_examples.py -k CODE` fail
until its match and examples say what the rule does. With --code-rule the rule's matches are
kind "code" tables and a module beside it (NM321_xla_barrier.py) holds a CodeRule visitor to
fill in (neuron_migrate/engine/coderule.py). CONTRIBUTING.md walks through the rest.

A script rather than a `neuron-migrate` command: it writes into the repository's rules/
(a contributor's job, on a source checkout), and the command line users run stays as it is.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neuron_migrate.config.tomlread import tomllib  # noqa: E402
from neuron_migrate.packs import loader  # noqa: E402

DATA_RULE = '''\
#:schema ../rule.schema.json
# {code} {name} (pack `{pack}`)
# Every field is described by rules/rule.schema.json (an editor with Taplo / Even Better TOML
# completes them). Replace each TODO; `pytest tests/test_rule_examples.py -k {code}` fails until
# the examples below are right.
code = "{code}"
name = "{name}"
severity = "error"  # error: breaks on TorchNeuron; warning: works but wrong; info: a hint
# One line: what was found, what to use instead. Placeholders: {{name}} the code as written,
# {{qname}} what it resolves to, {{args}} / {{arg0}} the call's arguments, {{device}} the target.
message = "`{{name}}()` is TODO; on TorchNeuron use TODO"
why = """
TODO: why this code has to change on TorchNeuron (what the legacy API did, what is different).
"""
fix = """
TODO: what the fix writes, and why it is safe (meaning kept), unsafe (needs review) or manual.
"""
source = "https://TODO.example/the-page-the-mapping-comes-from"
# code that must NOT be reported: a look-alike that is not the legacy API
ok = [
    """
class legacy:
    @staticmethod
    def call():
        return "not the legacy package"

legacy.call()
""",
]

# what the rule finds, tried in order (kinds, conditions and actions: rules/rule.schema.json)
[[match]]
kind = "call"
names = ["todo_legacy_package.module.call"]  # fully qualified, as the imports resolve it
# action = "replace-expression"
# template = "torch.TODO({{args}})"
# imports = ["import torch"]
# safety = "safe"

[[example]]
# settings = {{ target-device = "cpu", unsafe-fixes = true }}
before = """
import legacy_package.module as lm

lm.call()
"""
after = """
TODO: what --fix writes (leave `after` out for a manual rule: then `before` must be reported)
"""
'''


# with --code-rule: the same file, but its matches are reported by the module beside it
CODE_MATCH = """\
# what the rule finds: the module beside this file reports with these tables
# (`case` names the table; its message and safety are the finding's; no safety: manual)
[[match]]
kind = "code"
case = "todo"
names = ["todo_legacy_package.module.call"]  # fully qualified; the module reads them
# safety = "unsafe"
"""

CODE_MODULE = '''\
"""{code} {name}: TODO what this rule finds that a table cannot say.

TODO: when the fix is offered, and when the finding is left manual.

The rule's messages, safety, `why`, `fix`, `source` and examples are in its TOML file:
{stem}.toml
The context a rule may use and the edit builders: neuron_migrate/engine/coderule.py.
"""

from __future__ import annotations

import libcst as cst

from neuron_migrate.engine.coderule import CodeRule, matches_name


class {cls}(CodeRule):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.names = self.pattern("todo").names

    def visit_Call(self, node: cst.Call) -> None:
        qname = self.ctx.qname(node.func)
        if qname is None or not matches_name(qname, self.names):
            return
        # TODO: the logic a table cannot say. Report with the [[match]] `case` it concerns;
        # pass edits for a fix, e.g. edits=[self.ctx.replace(node, "torch.TODO()")]
        self.report(node, case="todo")
'''


def rule_file_name(code: str, name: str) -> str:
    return f"{code}_{name.replace('-', '_')}.toml"


def taken(rules_dir: Path) -> tuple[set[str], set[str]]:
    """Codes and names already used by the rule files under rules_dir."""
    codes, names = set(), set()
    for header in rules_dir.glob(f"*/{loader.PACK_FILE}"):
        for path in loader.rule_files(header.parent):
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            codes.add(data.get("code"))
            names.add(data.get("name"))
    return codes, names


def create(pack: str, code: str, name: str, rules_dir: Path, code_rule: bool = False) -> list[Path]:
    """Write the new rule's files; raise SystemExit with a reason when it cannot."""
    folder = rules_dir / pack
    if not (folder / loader.PACK_FILE).is_file():
        packs = sorted(p.parent.name for p in rules_dir.glob(f"*/{loader.PACK_FILE}"))
        raise SystemExit(f"no pack {pack!r} in {rules_dir} (packs: {', '.join(packs)})")
    if not loader.CODE_RE.match(code):
        raise SystemExit(
            f"{code!r}: a code is NM, an optional capital letter and three digits (NM321, NMC101)"
        )
    if not loader.NAME_RE.match(name):
        raise SystemExit(f"{name!r}: a name is kebab-case (xla-barrier)")
    codes, names = taken(rules_dir)
    if code in codes or name in names:
        raise SystemExit(f"{code if code in codes else name} is already used by a rule")
    path = folder / rule_file_name(code, name)
    text = DATA_RULE.format(pack=pack, code=code, name=name)
    if not code_rule:
        path.write_text(text, encoding="utf-8")
        return [path]
    # the data rule's [[match]] table gives way to kind "code" tables the module reports with
    start = text.index("# what the rule finds")
    end = text.index("[[example]]")
    text = text[:start] + CODE_MATCH + "\n" + text[end:]
    module = path.with_suffix(".py")
    cls = "".join(part.capitalize() for part in name.split("-"))
    path.write_text(text, encoding="utf-8")
    module.write_text(
        CODE_MODULE.format(code=code, name=name, stem=path.stem, cls=cls), encoding="utf-8"
    )
    return [path, module]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Then: fill in the TODOs, run `pytest tests/test_rule_examples.py -k CODE`.",
    )
    parser.add_argument("pack", help="the pack folder under rules/ (xla, neuron-beta, ...)")
    parser.add_argument("code", help="the new code: NM321, or with a pack letter NMC101")
    parser.add_argument("name", help="the new name, kebab-case")
    parser.add_argument("--code-rule", action="store_true", help="also a code module beside it")
    parser.add_argument("--rules-dir", type=Path, default=REPO / "rules", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for path in create(args.pack, args.code, args.name, args.rules_dir, args.code_rule):
        print(f"created {path}")
    print(
        f"next: fill in the TODOs, then `pytest tests/test_rule_examples.py -k {args.code}`; "
        "when it passes, refresh the README table (`python -m tests.test_readme`) and the "
        "behaviour snapshot (CONTRIBUTING.md)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
