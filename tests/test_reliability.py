"""Unusual but valid files are checked and fixed like any other; bad input is one NM000 line and
the run goes on; a file with no findings is never touched."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from neuron_migrate.checkers import python as pipeline
from neuron_migrate.cli import main

LEGACY = "import torch_xla.core.xla_model as xm\n\ndef step():\n    xm.mark_step()\n    return 1\n"


def check(*args: str):
    return CliRunner().invoke(main, ["check", "--no-cache", *args], catch_exceptions=False)


def findings(path: Path, *args: str) -> list[dict]:
    return json.loads(check("--format", "json", *args, str(path)).stdout)


# ---- unusual but valid files ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    [
        ("bom", b"\xef\xbb\xbf" + LEGACY.encode(), None),
        ("crlf", LEGACY.replace("\n", "\r\n").encode(), None),
        (
            "mixed",
            b"import torch_xla.core.xla_model as xm\r\nx = 1\n\ndef step():\r\n    xm.mark_step()\n    return 1\r\n",
            b"x = 1\n\ndef step():\r\n    return 1\r\n",
        ),
        (
            "tabs",
            b"import torch_xla.core.xla_model as xm\n\ndef step():\n\txm.mark_step()\n\treturn 1\n",
            b"\ndef step():\n\treturn 1\n",
        ),
        (
            "latin1",
            "# -*- coding: latin-1 -*-\nimport torch_xla.core.xla_model as xm\ns = 'caf\xe9'\nxm.mark_step()\n".encode(
                "latin-1"
            ),
            "# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n".encode("latin-1"),
        ),
    ],
)
def test_unusual_files_are_fixed_and_bytes_outside_edits_kept(tmp_path, name, raw, expected):
    path = tmp_path / f"{name}.py"
    path.write_bytes(raw)
    assert [f["code"] for f in findings(path)] == ["NM201"]
    check("--fix", str(path))
    out = path.read_bytes()
    if expected is None:  # BOM / CRLF: the same edit as on the plain file, in the file's bytes
        plain = "\ndef step():\n    return 1\n"
        if name == "bom":
            expected = b"\xef\xbb\xbf" + plain.encode()
        else:
            expected = plain.replace("\n", "\r\n").encode()
    assert out == expected
    assert findings(path) == []


def test_empty_file(tmp_path):
    path = tmp_path / "empty.py"
    path.write_bytes(b"")
    assert check(str(path)).exit_code == 0
    path.write_bytes(b"import torch_xla\n")
    check("--fix", str(path))
    assert path.read_bytes().strip() == b""


@pytest.mark.slow
def test_five_megabyte_file(tmp_path):
    # embedded data (a vocabulary, a test vector) makes big files; plus some code
    data = "TABLE = " + repr("".join(f"token{i} " for i in range(600_000))) + "\n"
    code = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(2000))
    body = data + code
    path = tmp_path / "big.py"
    path.write_text("import torch_xla.core.xla_model as xm\n" + body + "xm.mark_step()\n")
    assert path.stat().st_size > 5_000_000
    assert [f["code"] for f in findings(path)] == ["NM201"]
    check("--fix", str(path))
    assert path.read_text() == body


def test_a_file_without_findings_is_never_rewritten(tmp_path):
    path = tmp_path / "clean.py"
    path.write_text("import torch\nimport torch_xla  # noqa: NM603\nx = torch.ones(2)\n")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = path.read_bytes()
    check("--fix", "--unsafe-fixes", str(path))
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == 1_000_000_000


# ---- bad input: one NM000 line, the run goes on ----------------------------------------------


def _bad_tree(root: Path) -> None:
    (root / "a_syntax.py").write_text("import torch_xla\ndef f(:\n    pass\n")
    (root / "b_python2.py").write_text("import torch_xla\nprint 'hello'\nexec 'x = 1'\n")
    (root / "c_nul.py").write_bytes(b"import torch_xla\x00\n")
    (root / "d_undecodable.py").write_bytes(b"import torch_xla\nx = '\xff\xfe'\n")
    (root / "e_nested.py").write_text(
        "import torch_xla\nx = " + "(" * 3000 + "1" + ")" * 3000 + "\n"
    )
    (root / "f_dir.py").mkdir()
    (root / "f_dir.py" / "inner.py").write_text(LEGACY)
    loop = root / "g_loop"
    loop.mkdir()
    (loop / "self").symlink_to(loop)
    (root / "h_link.py").symlink_to(root / "h_link.py")
    (root / "z_good.py").write_text(LEGACY)


def test_bad_input_is_one_nm000_line_each(tmp_path):
    _bad_tree(tmp_path)
    result = check("--format", "json", str(tmp_path))
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    data = json.loads(result.stdout)
    problems = {Path(d["path"]).name: d["message"] for d in data if d["code"] == "NM000"}
    assert "syntax error" in problems["a_syntax.py"]
    assert "syntax error" in problems["b_python2.py"]
    assert "binary" in problems["c_nul.py"]
    assert "decode" in problems["d_undecodable.py"]
    assert "nested" in problems["e_nested.py"] or "syntax" in problems["e_nested.py"]
    # the folder named x.py is walked, the loops are not followed, the good files are checked
    codes = {(Path(d["path"]).name, d["code"]) for d in data}
    assert ("inner.py", "NM201") in codes and ("z_good.py", "NM201") in codes
    assert sum(1 for d in data if d["code"] == "NM000") <= 6


def test_unreadable_file(tmp_path, monkeypatch):
    path = tmp_path / "locked.py"
    path.write_text(LEGACY)
    real = Path.read_bytes

    def read_bytes(self):
        if self.name == "locked.py":
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    (tmp_path / "other.py").write_text(LEGACY)
    data = findings(tmp_path)
    assert [d["message"] for d in data if d["code"] == "NM000"] == [
        "cannot read: Permission denied"
    ]
    assert any(Path(d["path"]).name == "other.py" for d in data)


def test_read_only_file_is_not_fixed(tmp_path):
    path = tmp_path / "ro.py"
    path.write_text(LEGACY)
    path.chmod(0o444)
    result = check("--fix", str(path))
    assert "read-only" in result.output
    assert path.read_text() == LEGACY


def test_file_changed_between_read_and_write_is_not_overwritten(tmp_path, monkeypatch):
    path = tmp_path / "moving.py"
    path.write_text(LEGACY)
    real = pipeline.check_source

    def check_source(text, *args, **kwargs):
        result = real(text, *args, **kwargs)
        path.write_text(LEGACY + "# edited meanwhile\n")  # someone saves the file now
        return result

    monkeypatch.setattr(pipeline, "check_source", check_source)
    result = check("--fix", str(path))
    assert "changed on disk" in result.output
    assert path.read_text() == LEGACY + "# edited meanwhile\n"
    assert not list(tmp_path.glob("*.nm-tmp"))


def test_deep_nesting_never_raises_recursion_error(tmp_path):
    old = sys.getrecursionlimit()
    path = tmp_path / "deep.py"
    path.write_text(
        "import torch_xla.core.xla_model as xm\nx = " + "[" * 900 + "]" * 900 + "\nxm.mark_step()\n"
    )
    result = check("--format", "json", str(path))
    assert result.exit_code in (0, 1)
    assert sys.getrecursionlimit() == old
