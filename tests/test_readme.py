"""The README's rule table is generated from the packs and must not go stale."""

from __future__ import annotations

from neuron_migrate.api import example_runs
from neuron_migrate.packs import docs
from neuron_migrate.packs.loader import load_rules
from tests.conftest import REPO


def current_table() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(docs.README_BEGIN) + len(docs.README_BEGIN)
    end = text.index(docs.README_END)
    return text[start:end].strip("\n") + "\n"


def test_readme_rule_table_is_current():
    rules = load_rules()
    expected = docs.markdown_table(rules, example_runs(rules))
    assert current_table() == expected, (
        "README rule table is stale: run `python -m neuron_migrate rules --format markdown` "
        "and paste it between the rules-table markers (or `python -m tests.test_readme`)"
    )


def update() -> None:
    path = REPO / "README.md"
    text = path.read_text(encoding="utf-8")
    start = text.index(docs.README_BEGIN) + len(docs.README_BEGIN)
    end = text.index(docs.README_END)
    rules = load_rules()
    table = docs.markdown_table(rules, example_runs(rules))
    path.write_text(text[:start] + "\n" + table + text[end:], encoding="utf-8")


if __name__ == "__main__":
    update()
