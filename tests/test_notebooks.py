"""Jupyter notebooks: checked and fixed cell by cell; magics left alone; the JSON kept as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuron_migrate.checkers import notebook as notebook_checker
from tests.conftest import run_code
from tests.test_cli import invoke


def notebook(*cells, **style) -> str:
    nb = {
        "cells": list(cells),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    style = {"indent": 1, "sort_keys": True, "ensure_ascii": False, **style}
    return json.dumps(nb, **style) + "\n"


def code(*lines: str, outputs=None, count=None) -> dict:
    return {
        "cell_type": "code",
        "execution_count": count,
        "metadata": {},
        "outputs": outputs or [],
        "source": list(lines),
    }


def markdown(*lines: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": list(lines)}


OUTPUT = [
    {
        "data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAE=\n", "text/plain": ["<Figure 1>"]},
        "metadata": {},
        "output_type": "display_data",
    }
]

LEGACY_NB = notebook(
    markdown("# Entraînement sur Trainium ✓\n", "Notes."),
    code(
        "%matplotlib inline\n",
        "!pip install -q foo\n",
        "import torch\n",
        "import torch_xla.core.xla_model as xm\n",
        "files = !ls\n",
        "xm?",
        count=1,
    ),
    code(
        "device = xm.xla_device()\n",
        "for i in range(3):\n",
        "    %time x = torch.ones(2).to(device)\n",
        "    xm.mark_step()",
        outputs=OUTPUT,
        count=2,
    ),
    code("%%bash\n", "echo xm.mark_step()"),
    code("%%writefile step.py\n", "import torch_xla.core.xla_model as xm\n", "xm.mark_step()\n"),
    code(),
)


@pytest.fixture
def nb_path(tmp_path: Path) -> Path:
    path = tmp_path / "train.ipynb"
    path.write_text(LEGACY_NB, encoding="utf-8")
    return path


def test_findings_point_to_cell_and_line(nb_path):
    result = invoke("check", "train.ipynb", cwd=nb_path.parent)
    assert result.exit_code == 1
    out = result.stdout
    assert "train.ipynb:cell 3:1:10: NM101 [*]" in out
    assert "train.ipynb:cell 3:4:5: NM201 [*]" in out
    assert "train.ipynb:cell 5:3:1: NM201" in out  # %%writefile x.py: the body is Python
    assert "cell 4" not in out  # %%bash: not Python
    data = json.loads(invoke("check", "--format", "json", str(nb_path)).stdout)
    assert {(d["cell"], d["line"], d["code"]) for d in data} >= {(3, 1, "NM101"), (3, 4, "NM201")}


def test_fix_changes_only_the_code_cells_sources(nb_path):
    before = nb_path.read_text(encoding="utf-8")
    result = invoke("check", "--fix", str(nb_path))
    assert result.exit_code == 0, result.output
    after = nb_path.read_text(encoding="utf-8")
    old, new = json.loads(before), json.loads(after)
    assert notebook_checker._source_text(new["cells"][2]["source"]) == (
        'device = torch.device("neuron")\nfor i in range(3):\n    %time x = torch.ones(2).to(device)'
    )
    cell2 = notebook_checker._source_text(new["cells"][1]["source"])
    assert "torch_xla" not in cell2 and cell2.startswith(
        "%matplotlib inline\n!pip install -q foo\n"
    )
    assert "files = !ls\nxm?" in cell2
    assert new["cells"][3] == old["cells"][3]  # %%bash untouched
    for i in (0, 1, 2, 3, 4, 5):
        assert {k: v for k, v in new["cells"][i].items() if k != "source"} == {
            k: v for k, v in old["cells"][i].items() if k != "source"
        }
    # byte-for-byte outside the changed sources: re-encoding the fixed notebook the way
    # Jupyter does gives the same bytes, and so does putting the old sources back
    assert after == json.dumps(new, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    spans_old = notebook_checker.source_spans(before)
    spans_new = notebook_checker.source_spans(after)
    assert before[: spans_old[1][0]] == after[: spans_new[1][0]]
    assert before[spans_old[4][1] :] == after[spans_new[4][1] :]
    # idempotent
    again = invoke("check", "--fix", str(nb_path))
    assert again.exit_code == 0 and nb_path.read_text(encoding="utf-8") == after


def test_layout_of_other_writers_is_kept(tmp_path):
    """indent 2, sources as plain strings, ASCII escapes, CRLF line endings."""
    text = notebook(
        markdown("caf\u00e9"),
        {
            **code(),
            "source": "import torch_xla.core.xla_model as xm\nxm.mark_step()\nprint('\u00e9')\n",
        },
        indent=2,
        ensure_ascii=True,
    ).replace("\n", "\r\n")
    path = tmp_path / "n.ipynb"
    path.write_bytes(text.encode())
    invoke("check", "--fix", str(path))
    after = path.read_bytes().decode()
    assert "\\u00e9" in after and "\u00e9" not in after
    assert after.count("\r\n") == text.count("\r\n") and "\n" not in after.replace("\r\n", "")
    nb = json.loads(after)
    assert nb["cells"][1]["source"] == "print('\u00e9')\n"
    expected = text.replace(
        json.dumps("import torch_xla.core.xla_model as xm\nxm.mark_step()\nprint('\u00e9')\n"),
        json.dumps("print('\u00e9')\n"),
    )
    assert after == expected


def test_magics_never_break_parsing():
    text = notebook(
        code(
            "import torch_xla.core.xla_model as xm\n",
            "%load_ext autoreload\n",
            "if True:\n",
            "    !echo hi \\\n",
            "      there\n",
            "s = ('%d'\n",
            "     % 3)\n",
            "??xm\n",
            "r = %timeit -o xm.mark_step()\n",
            "xm.mark_step()",
        )
    )
    result = run_code(text, filename="m.ipynb", dedent=False)
    assert [(f.code, f.cell, f.span.line) for f in result.findings] == [("NM201", 1, 10)]


def test_a_syntax_error_names_its_cell():
    text = notebook(code("import torch_xla\n"), markdown("x"), code("def f(:\n", "    pass"))
    result = run_code(text, filename="s.ipynb", dedent=False)
    assert [(f.code, f.cell) for f in result.findings] == [("NM000", 3)]
    assert result.findings[0].span.line in (1, 2)


def test_non_python_notebooks_and_bad_json():
    r_nb = json.loads(notebook(code("xm.mark_step()")))
    r_nb["metadata"] = {"language_info": {"name": "R"}}
    assert run_code(json.dumps(r_nb), filename="r.ipynb", dedent=False).findings == []
    bad = run_code("{not json", filename="b.ipynb", dedent=False)
    assert [f.code for f in bad.findings] == ["NM000"]
    assert "not a notebook" in bad.findings[0].message


def test_notebook_diff(nb_path):
    result = invoke("check", "--diff", "train.ipynb", cwd=nb_path.parent)
    assert result.exit_code == 1
    assert "--- train.ipynb:cell 3\n+++ train.ipynb:cell 3\n" in result.stdout
    assert '+device = torch.device("neuron")' in result.stdout
    assert nb_path.read_text(encoding="utf-8") == LEGACY_NB


def test_notebook_on_stdin(nb_path):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "neuron_migrate", "check", "--fix", "--stdin-filename", "x.ipynb"],
        input=LEGACY_NB,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert proc.returncode == 0, proc.stderr
    assert 'torch.device(\\"neuron\\")' in proc.stdout
    json.loads(proc.stdout)


def test_json_line_of(nb_path):
    raw = nb_path.read_text(encoding="utf-8")
    line = notebook_checker.json_line_of(raw, 3, 1)
    assert '"device = xm.xla_device()\\n"' in raw.splitlines()[line - 1]


def test_timed_cell_is_python():
    """`%%time` / `%%timeit` / `%%capture` cells run their body as Python: it is migrated, so
    the import it used is not left dangling (issue 12)."""
    text = notebook(
        code("import torch_xla.core.xla_model as xm\n"),
        code("%%time\n", "for step in range(3):\n", "    xm.mark_step()\n"),
    )
    result = run_code(text, fix=True, dedent=False, filename="t.ipynb")
    assert result.error is None
    cells = json.loads(result.fixed_source)["cells"]
    assert "".join(cells[1]["source"]) == "%%time\nfor step in range(3):\n    pass\n"
    assert "xm" not in "".join(cells[0]["source"])
