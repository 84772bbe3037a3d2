"""The byte prefilter only saves work: it never skips a file in which the engine finds something."""

from __future__ import annotations

import pytest

from neuron_migrate.api import enabled_rules
from neuron_migrate.checkers.base import Job, Options
from neuron_migrate.checkers.python import analyze
from neuron_migrate.config.settings import Settings
from neuron_migrate.packs.loader import load_rules
from tests.conftest import REPO
from tests.test_golden import VARIANTS, migrate

SETTINGS = Settings(root=REPO)
JOB = Job(enabled_rules(SETTINGS), SETTINGS, Options())
RULESET = JOB.ruleset_for("x.py")


def _sources():
    for path in sorted((REPO / "examples").rglob("*.py")):
        yield pytest.param(path.read_text(encoding="utf-8"), id=path.relative_to(REPO).as_posix())
        # the migrated examples too (tests/golden stores only their diffs)
        for variant in sorted(VARIANTS):
            yield pytest.param(
                migrate(path, variant), id=f"{path.relative_to(REPO).as_posix()}-{variant}"
            )
    for rule in load_rules():
        for i, example in enumerate(rule.examples):
            if example.file.endswith(".py"):
                yield pytest.param(example.before, id=f"{rule.code}-before{i + 1}")
                if example.after:
                    yield pytest.param(example.after, id=f"{rule.code}-after{i + 1}")
        for i, snippet in enumerate(rule.ok):
            yield pytest.param(snippet, id=f"{rule.code}-ok{i + 1}")


# the examples, their migrated versions and every rule snippet, made once (migrating costs)
SOURCES = list(_sources())


@pytest.mark.parametrize("source", SOURCES)
def test_prefilter_never_hides_a_finding(source):
    try:
        findings = analyze(source, "a.py", JOB, RULESET).findings
    except Exception:  # noqa: BLE001 - not Python (a shell example); nothing to compare
        return
    if findings:
        assert RULESET.wants(source.encode()), [f.code for f in findings]


ALL_SETTINGS = Settings(root=REPO, select=("ALL",))
ALL_RULESET = Job(enabled_rules(ALL_SETTINGS), ALL_SETTINGS, Options()).ruleset_for("x.py")


@pytest.mark.parametrize("source", SOURCES)
def test_the_split_searches_answer_as_the_joined_regex(source):
    """`wants` runs the triggers as separate searches (plain words with `in`, shared prefixes
    grouped); it must say what the one joined regex of every trigger says."""
    data = source.encode()
    for ruleset in (RULESET, ALL_RULESET):
        assert ruleset.wants(data) == (ruleset.prefilter.search(data) is not None)


ALL_JOB = Job(enabled_rules(ALL_SETTINGS), ALL_SETTINGS, Options())


@pytest.mark.parametrize(
    "source",
    [
        "import optimum.neuron as on\ntrainer = on.NeuronTrainer(model=m)\n",
        "import optimum . neuron\ntrainer = optimum . neuron.NeuronTrainer(model=m)\n",
        "from optimum import neuron\ntrainer = neuron.NeuronTrainer(model=m)\n",
        "from optimum import (\n    neuron,\n)\ntrainer = neuron.NeuronTrainer(model=m)\n",
        "from optimum \\\n    import neuron\ntrainer = neuron.NeuronTrainer(model=m)\n",
        "import optimum as o\ntrainer = o.neuron.NeuronTrainer(model=m)\n",
        "import os, \\\n    optimum as o\ntrainer = o.neuron.NeuronTrainer(model=m)\n",
        "import os, \\\r\n    optimum as o\r\ntrainer = o.neuron.NeuronTrainer(model=m)\r\n",
        "import torch_neuronx as tnx\nmodel = tnx.trace(model, example)\n",
        "x = y.double()\n",
        "import torch\nz = torch.zeros(1, dtype=torch.double)\n",
    ],
)
def test_every_way_of_binding_a_name_is_a_trigger(source):
    findings = analyze(source, "a.py", ALL_JOB, ALL_RULESET).findings
    assert findings
    assert ALL_RULESET.wants(source.encode())


@pytest.mark.parametrize(
    "source",
    [
        '"""These defaults may need tuning for optimum performance."""\n',
        "import bnb\nbnb.functional.double_quant(b)\n",
    ],
)
def test_a_package_named_in_prose_or_a_longer_word_is_no_trigger(source):
    assert not ALL_RULESET.wants(source.encode())


@pytest.mark.parametrize(
    ("regex", "literal"),
    [
        (rb"import\b(?:[^\n]|\\\r?\n)*optimum", b"optimum"),
        (rb"a?bcd", b"bcd"),  # a quantified character may be absent
        (rb"x{2,3}yzw", b"yzw"),
        (rb"(x){10}abcd", b"abcd"),
        (rb"[abc]defg", b"defg"),  # a class is no literal
        (rb"(?:ab|cd)efg", b"efg"),  # nor a group
        (rb"\.double\b", b".double"),  # an escaped dot is
        (rb"abc|cde", None),  # either side may match
        (rb"(?i:neuron|xla)", None),  # any case
        (rb"(?i)neuron", None),
        (rb"ab", None),  # too short to be worth an extra search
    ],
)
def test_the_literal_a_trigger_needs(regex, literal):
    from neuron_migrate.engine.ruleset import required_literal

    assert required_literal(regex) == literal


def _regex_searches():
    for ruleset in (RULESET, ALL_RULESET):
        for gate, pattern in ruleset._searches[1]:
            if gate is not None:
                yield pytest.param(gate, pattern, id=pattern.pattern[:40].decode("latin-1"))


@pytest.mark.parametrize(("gate", "pattern"), list(_regex_searches()))
def test_a_regex_runs_only_after_its_literal_and_never_misses_a_match(gate, pattern):
    """Bytes built from the pieces of the triggers: wherever the regex matches, one of the
    literals it was gated on is there."""
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    # the regex's own words, whole and halved (not the gate's: the test must not trust it)
    words = re.findall(rb"[A-Za-z_0-9]{2,}", pattern.pattern)
    pieces = words + [w[: len(w) // 2] for w in words] + [w[len(w) // 2 :] for w in words]
    pieces += [b"import ", b".", b'"', b"'", b"\n", b"\\\n", b" ", b"=", b"(", b"x"]

    @settings(max_examples=25, deadline=None)
    @given(st.lists(st.sampled_from(pieces), max_size=12))
    def check(parts):
        data = b"".join(parts)
        if pattern.search(data):
            assert any(g in data for g in gate), data

    check()
