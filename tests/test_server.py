"""`neuron-migrate server` driven as an editor drives it: JSON-RPC over the server's stdio."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsp_driver import LspClient, apply_edits, default_capabilities, uri  # noqa: E402

# each test over stdio starts a server process (1.5 s, more on a busy machine)
slow = pytest.mark.slow

LEGACY = textwrap.dedent(
    """\
    import torch_xla.core.xla_model as xm

    device = xm.xla_device()
    xm.mark_step()
    """
)


def _codes(diagnostics: list[dict]) -> list[str]:
    return [d["code"] for d in diagnostics]


def _actions(client: LspClient, doc: str, diagnostic: dict | None, only=None) -> list[dict]:
    rng = (
        diagnostic["range"]
        if diagnostic
        else {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    )
    context: dict = {"diagnostics": [diagnostic] if diagnostic else []}
    if only:
        context["only"] = only
    return client.request(
        "textDocument/codeAction", {"textDocument": {"uri": doc}, "range": rng, "context": context}
    )


def _edit_of(action: dict, doc: str) -> list[dict]:
    return action["edit"]["changes"][doc]


@slow
def test_diagnostics_quick_fix_and_clearing(tmp_path: Path) -> None:
    path = tmp_path / "my train.py"  # its URI is quoted (%20), as editors send it
    path.write_text(LEGACY)
    with LspClient(tmp_path) as client:
        doc = client.open(path)
        diagnostics = client.diagnostics(doc)
        assert _codes(diagnostics) == ["NM101", "NM201"]
        first = diagnostics[0]
        assert first["severity"] == 1 and first["source"] == "neuron-migrate"
        assert first["range"]["start"] == {"line": 2, "character": 9}
        assert first["codeDescription"]["href"].startswith("https://")
        assert "torch.device" in first["message"]

        actions = _actions(client, doc, first)
        fix = next(a for a in actions if a["title"].startswith("Fix NM101"))
        assert fix["kind"] == "quickfix" and fix["isPreferred"]
        text = apply_edits(LEGACY, _edit_of(fix, doc))
        assert 'device = torch.device("neuron")' in text
        assert "xm.mark_step()" in text  # only this finding was fixed

        client.change(doc, 2, text)
        assert _codes(client.diagnostics(doc)) == ["NM201"]

        fix_all = _actions(client, doc, None, only=["source.fixAll"])
        assert [a["kind"] for a in fix_all] == ["source.fixAll.neuron-migrate"]
        text = apply_edits(text, _edit_of(fix_all[0], doc))
        assert "torch_xla" not in text and "mark_step" not in text
        client.change(doc, 3, text)
        assert client.diagnostics(doc) == []


@slow
def test_syntax_error_mid_edit_gives_nm000_and_the_server_keeps_serving(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(LEGACY)
    with LspClient(tmp_path) as client:
        doc = client.open(path)
        assert _codes(client.diagnostics(doc)) == ["NM101", "NM201"]
        broken = LEGACY.replace("device = xm.xla_device()", "device = xm.xla_device(")
        client.change(doc, 2, broken)
        diagnostics = client.diagnostics(doc)
        assert _codes(diagnostics) == ["NM000"]
        assert "syntax error" in diagnostics[0]["message"]
        assert _actions(client, doc, diagnostics[0]) == []  # nothing to fix or silence
        client.change(doc, 3, LEGACY)
        assert _codes(client.diagnostics(doc)) == ["NM101", "NM201"]


@slow
def test_hover_shows_the_rule_explanation(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(LEGACY)
    with LspClient(tmp_path) as client:
        doc = client.open(path)
        client.diagnostics(doc)
        hover = client.request(
            "textDocument/hover",
            {"textDocument": {"uri": doc}, "position": {"line": 2, "character": 15}},
        )
        assert hover["contents"]["kind"] == "markdown"
        assert hover["contents"]["value"].startswith("# NM101 xla-device")
        assert "## Why" in hover["contents"]["value"]
        nothing = client.request(
            "textDocument/hover",
            {"textDocument": {"uri": doc}, "position": {"line": 1, "character": 0}},
        )
        assert nothing is None


@slow
def test_noqa_action(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(LEGACY)
    with LspClient(tmp_path) as client:
        doc = client.open(path)
        diagnostics = client.diagnostics(doc)
        noqa = next(a for a in _actions(client, doc, diagnostics[1]) if "noqa" in a["title"])
        text = apply_edits(LEGACY, _edit_of(noqa, doc))
        assert "xm.mark_step()  # noqa: NM201\n" in text
        client.change(doc, 2, text)
        assert _codes(client.diagnostics(doc)) == ["NM101"]


UNSAFE = "import torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device(1)\n"


@slow
@pytest.mark.parametrize("allowed", [False, True])
def test_unsafe_fixes_only_when_the_client_allows_them(tmp_path: Path, allowed: bool) -> None:
    path = tmp_path / "train.py"
    path.write_text(UNSAFE)
    with LspClient(tmp_path, init_options={"unsafeFixes": allowed}) as client:
        doc = client.open(path)
        diagnostics = client.diagnostics(doc)
        assert diagnostics[0]["data"]["fix"] == "unsafe"
        titles = [a["title"] for a in _actions(client, doc, diagnostics[0])]
        assert any(t.startswith("Fix NM101") for t in titles) == allowed
        fix_all = _actions(client, doc, None, only=["source.fixAll.neuron-migrate"])
        assert len(fix_all) == int(allowed)
        if allowed:
            text = apply_edits(UNSAFE, _edit_of(fix_all[0], doc))
            # an index under torchrun picks the local rank's core: the fix drops it (unsafe)
            assert 'torch.device("neuron")' in text and "xla_device" not in text


@slow
def test_resolve_makes_the_edit_when_the_client_can_resolve(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(LEGACY)
    capabilities = default_capabilities()
    capabilities["textDocument"]["codeAction"]["resolveSupport"] = {"properties": ["edit"]}
    with LspClient(tmp_path, capabilities=capabilities) as client:
        doc = client.open(path)
        client.diagnostics(doc)
        (lazy,) = _actions(client, doc, None, only=["source.fixAll"])
        assert "edit" not in lazy or lazy["edit"] is None
        resolved = client.request("codeAction/resolve", lazy)
        assert "torch_xla" not in apply_edits(LEGACY, _edit_of(resolved, doc))


@slow
def test_settings_from_pyproject_reloaded_when_it_changes(tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.neuron-migrate]\nignore = ["NM201"]\ntarget-device = "cpu"\n')
    path = tmp_path / "src" / "train.py"
    path.parent.mkdir()
    path.write_text(LEGACY)
    with LspClient(tmp_path) as client:
        registration = client.wait_for_request("client/registerCapability")
        (watcher,) = registration["params"]["registrations"]
        assert watcher["method"] == "workspace/didChangeWatchedFiles"
        doc = client.open(path)
        diagnostics = client.diagnostics(doc)
        assert _codes(diagnostics) == ["NM101"]
        assert 'torch.device("cpu")' in diagnostics[0]["message"]  # the target device

        config.write_text("[tool.neuron-migrate]\n")
        client.notify(
            "workspace/didChangeWatchedFiles", {"changes": [{"uri": uri(config), "type": 2}]}
        )
        diagnostics = client.diagnostics(doc)
        assert _codes(diagnostics) == ["NM101", "NM201"]
        assert 'torch.device("neuron")' in diagnostics[0]["message"]

        # saving pyproject.toml in the editor reloads it too
        config.write_text('[tool.neuron-migrate]\nignore = ["NM101"]\n')
        client.open(config, config.read_text(), language="toml")
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri(config)}})
        assert _codes(client.diagnostics(doc)) == ["NM201"]


@slow
def test_bad_pyproject_is_reported_and_the_server_keeps_serving(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.neuron-migrate]\nselect = ["NOPE9"]\n')
    path = tmp_path / "train.py"
    path.write_text(LEGACY)
    with LspClient(tmp_path) as client:
        doc = client.open(path)
        diagnostics = client.diagnostics(doc)
        assert _codes(diagnostics) == ["NM000"]
        assert "NOPE9" in diagnostics[0]["message"]


def _cell(uri_: str, kind: int = 2) -> dict:
    return {"kind": kind, "document": uri_}


@slow
def test_notebook_cells_get_their_diagnostics(tmp_path: Path) -> None:
    notebook = (tmp_path / "explore.ipynb").as_uri()
    cells = [
        (f"{notebook}#c1", "import torch_xla.core.xla_model as xm\n", 2),
        (f"{notebook}#c2", "# Notes\n", 1),
        (f"{notebook}#c3", "device = xm.xla_device()\n%timeit xm.mark_step()\n", 2),
    ]
    with LspClient(tmp_path) as client:
        client.notify(
            "notebookDocument/didOpen",
            {
                "notebookDocument": {
                    "uri": notebook,
                    "notebookType": "jupyter-notebook",
                    "version": 1,
                    "cells": [_cell(u, k) for u, _, k in cells],
                },
                "cellTextDocuments": [
                    {
                        "uri": u,
                        "languageId": "python" if k == 2 else "markdown",
                        "version": 1,
                        "text": t,
                    }
                    for u, t, k in cells
                ],
            },
        )
        by_cell = {u: client.diagnostics(u) for u, _, _ in cells}
        assert by_cell[cells[0][0]] == [] and by_cell[cells[1][0]] == []
        # the `%timeit` line magic's statement is checked too (NM201)
        assert sorted(d["code"] for d in by_cell[cells[2][0]]) == ["NM101", "NM201"]
        found = next(d for d in by_cell[cells[2][0]] if d["code"] == "NM101")
        assert found["range"]["start"] == {"line": 0, "character": 9}

        hover = client.request(
            "textDocument/hover",
            {"textDocument": {"uri": cells[2][0]}, "position": {"line": 0, "character": 12}},
        )
        assert hover["contents"]["value"].startswith("# NM101")

        one = _actions(client, cells[2][0], found)
        fix = next(a for a in one if a["title"].startswith("Fix NM101"))
        fixed = apply_edits(cells[2][1], fix["edit"]["changes"][cells[2][0]])
        assert fixed.startswith('device = torch.device("neuron")\n')
        assert any("noqa: NM101" in a["title"] for a in one)

        (fix_all,) = _actions(client, cells[2][0], None, only=["source.fixAll"])
        changes = fix_all["edit"]["changes"]
        first = apply_edits(cells[0][1], changes[cells[0][0]])
        third = apply_edits(cells[2][1], changes[cells[2][0]])
        assert "torch_xla" not in first and "import torch" in first
        # the timed `xm.mark_step()` is removed with its `%timeit` line (NM201)
        assert third == 'device = torch.device("neuron")\n'

        # an edit of the cell through notebook synchronisation clears the finding
        client.notify(
            "notebookDocument/didChange",
            {
                "notebookDocument": {"uri": notebook, "version": 2},
                "change": {
                    "cells": {
                        "textContent": [
                            {
                                "document": {"uri": cells[2][0], "version": 2},
                                "changes": [{"text": third}],
                            }
                        ]
                    }
                },
            },
        )
        assert client.diagnostics(cells[2][0]) == []


@slow
def test_a_file_not_checked_gets_nothing_and_the_server_answers(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("xm.xla_device()\n")
    with LspClient(tmp_path) as client:
        doc = client.open(path, language="markdown")
        assert _actions(client, doc, None) == []
        assert json.dumps(client.notifications).count(doc) == 0


def test_the_command_line_does_not_import_the_server_libraries() -> None:
    import subprocess
    import sys

    code = (
        "import sys, neuron_migrate.cli.app, neuron_migrate.api; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@slow
def test_a_notebook_opened_as_text_points_to_its_json_lines(tmp_path: Path) -> None:
    source = ["import torch_xla.core.xla_model as xm\n", "device = xm.xla_device()\n"]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": source}],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "explore.ipynb"
    text = json.dumps(notebook, indent=1) + "\n"
    path.write_text(text)
    with LspClient(tmp_path) as client:
        doc = client.open(path, language="json")
        (found,) = client.diagnostics(doc)
        line = text.splitlines()[found["range"]["start"]["line"]]
        assert found["code"] == "NM101" and "xla_device" in line
        (fix_all,) = _actions(client, doc, None, only=["source.fixAll"])
        fixed = json.loads(apply_edits(text, _edit_of(fix_all, doc)))
        assert "torch.device" in "".join(fixed["cells"][0]["source"])


@slow
def test_excluded_files_get_no_diagnostics(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.neuron-migrate]\nextend-exclude = ["vendor"]\n')
    vendored = tmp_path / "vendor" / "old.py"
    vendored.parent.mkdir()
    vendored.write_text(LEGACY)
    mine = tmp_path / "train.py"
    mine.write_text(LEGACY)
    with LspClient(tmp_path) as client:
        client.open(vendored)
        doc = client.open(mine)
        assert _codes(client.diagnostics(doc)) == ["NM101", "NM201"]
        assert not any(uri(vendored) in json.dumps(n) for n in client.notifications)


def test_in_process_check_quick_fix_and_noqa(tmp_path: Path) -> None:
    """The server's document path without the wire (the fast lane's server test)."""
    from lsprotocol import types as lsp
    from pygls.workspace.position_codec import PositionCodec

    from neuron_migrate.server.actions import Request, text_actions
    from neuron_migrate.server.config import SettingsStore
    from neuron_migrate.server.documents import Checker

    checker = Checker(SettingsStore())
    doc = (tmp_path / "train.py").as_uri()
    checked = checker.check_text(doc, LEGACY)
    assert [f.code for f in checked.result.findings] == ["NM101", "NM201"]
    everywhere = lsp.Range(lsp.Position(0, 0), lsp.Position(9, 0))
    request = Request(
        everywhere, None, False, True, PositionCodec(lsp.PositionEncodingKind.Utf16), checker
    )
    titles = {a.title.split(":")[0]: a for a in text_actions(checked, request)}
    assert set(titles) == {
        "Fix NM101",
        "Fix NM201",
        "Disable NM101 for this line (# noqa",
        "Disable NM201 for this line (# noqa",
        "neuron-migrate",
    }
    assert checker.check_text(doc, LEGACY) is checked  # unchanged text: no second check
    broken = checker.check_text(doc, LEGACY + "def f(:\n")
    assert [f.code for f in broken.result.findings] == ["NM000"]
