"""An internal error in one rule on one file names the file and the rule; the other rules
and files still run, and the exit code is 2. No traceback reaches the user."""

from __future__ import annotations

from click.testing import CliRunner

from neuron_migrate.cli import main
from neuron_migrate.engine import edits
from neuron_migrate.engine.coderule import load_rule_module
from neuron_migrate.packs.loader import load_rules

SOURCE = (
    "import torch\n"
    "import torch_xla.core.xla_model as xm\n"
    "device = xm.xla_device(0)\n"
    "model = torch.compile(model, backend='openxla')\n"
    "xm.mark_step()\n"
)


def _broken(*args, **kwargs):
    raise ValueError("boom")


def test_failing_condition_is_reported_with_its_rule(tmp_path, monkeypatch):
    nm206 = next(r for r in load_rules() if r.code == "NM206")
    monkeypatch.setitem(load_rule_module(nm206.module).predicates, "backend_differs", _broken)
    (tmp_path / "a.py").write_text(SOURCE)
    (tmp_path / "b.py").write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\n")
    result = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 2
    assert "a.py: internal error: rule NM206 failed (ValueError: boom)" in result.output
    assert "please report it" in result.output
    assert "Traceback" not in result.output
    # the other rules ran on a.py, and b.py was checked
    assert "a.py:5:1: NM201" in result.output and "b.py:2:1: NM201" in result.output


def test_failing_edit_is_reported_with_its_rule(tmp_path, monkeypatch):
    monkeypatch.setitem(edits.STATEMENT_ACTIONS, "remove-statement", _broken)
    path = tmp_path / "a.py"
    path.write_text(SOURCE)
    result = CliRunner().invoke(main, ["check", "--fix", str(tmp_path)])
    assert result.exit_code == 2
    assert "rule NM201 failed (ValueError: boom)" in result.output
    assert "Traceback" not in result.output
    # what the other rules fix is still fixed; the failing edit is not
    text = path.read_text()
    assert 'backend="neuron"' in text and "xm.mark_step()" in text
