"""Companion modules: a fix that imports a plain module of the user's project writes it once,
beside the fixed files, and never over an existing file."""

from __future__ import annotations

from pathlib import Path

from neuron_migrate.api import run
from neuron_migrate.checkers.base import Options
from neuron_migrate.config.settings import Settings

LEGACY = """\
from neuronx_distributed.parallel_layers import parallel_state

parallel_state.initialize_model_parallel(tensor_model_parallel_size=2)
"""


def _fix(root: Path, fix: bool = True):
    settings = Settings(select=("NM315", "NM603"), target_device="cpu", root=root)
    return run([root], settings, Options(fix=fix, unsafe_fixes=True), jobs=1, cache=False)


def test_written_once_beside_the_fixed_files(tmp_path: Path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(LEGACY)
    (tmp_path / "pkg" / "b.py").write_text(LEGACY)
    result = _fix(tmp_path)
    mesh = tmp_path / "pkg" / "parallel_mesh.py"
    assert result.created == [mesh]
    assert "init_device_mesh" in mesh.read_text()
    assert "import parallel_mesh" in (tmp_path / "pkg" / "a.py").read_text()
    # a new legacy file later: the user's copy of the module stays as it is
    mesh.write_text("# mine\n")
    (tmp_path / "pkg" / "c.py").write_text(LEGACY)
    assert _fix(tmp_path).created == []
    assert mesh.read_text() == "# mine\n"


def test_not_written_without_fix(tmp_path: Path):
    (tmp_path / "a.py").write_text(LEGACY)
    result = _fix(tmp_path, fix=False)
    assert result.created == []
    assert not (tmp_path / "parallel_mesh.py").exists()


def test_common_folder_of_files_in_subfolders(tmp_path: Path):
    for sub in ("train", "model"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "x.py").write_text(LEGACY)
    assert _fix(tmp_path).created == [tmp_path / "parallel_mesh.py"]


def test_diff_shows_the_companion_as_a_new_file_and_writes_nothing(tmp_path: Path, monkeypatch):
    from click.testing import CliRunner

    from neuron_migrate.cli.app import main as cli

    (tmp_path / "train.py").write_text(LEGACY)
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(
        cli,
        ["check", "--diff", "--unsafe-fixes", "--target-device", "cpu", "--no-cache", "."],
    )
    assert done.exit_code == 1, done.output
    head = "--- /dev/null\n+++ parallel_mesh.py\n"
    assert head in done.stdout
    created = done.stdout.split(head, 1)[1].splitlines()[1:]
    assert created and all(line.startswith("+") for line in created)
    assert any("init_device_mesh" in line for line in created)
    assert not (tmp_path / "parallel_mesh.py").exists()
    assert (tmp_path / "train.py").read_text() == LEGACY


SCRIPT = LEGACY + '\n\nif __name__ == "__main__":\n    print("train")\n'


def test_independent_samples_each_get_their_own_copy(tmp_path: Path):
    """Python puts a script's own folder on sys.path: one copy above two samples in a repository
    of samples would be found by neither."""
    for sample in ("llama", "bert"):
        (tmp_path / "samples" / sample).mkdir(parents=True)
        (tmp_path / "samples" / sample / "train.py").write_text(SCRIPT)
        (tmp_path / "samples" / sample / "model.py").write_text(LEGACY)
    created = _fix(tmp_path).created
    assert created == [
        tmp_path / "samples" / "bert" / "parallel_mesh.py",
        tmp_path / "samples" / "llama" / "parallel_mesh.py",
    ]


def test_a_script_above_its_modules_gets_the_one_copy(tmp_path: Path):
    (tmp_path / "modeling").mkdir()
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "modeling" / "llama.py").write_text(LEGACY)
    assert _fix(tmp_path).created == [tmp_path / "parallel_mesh.py"]


def test_a_script_that_does_not_import_it_still_places_it(tmp_path: Path):
    """Only the model module uses NxD; the training script beside the package imports the
    model, so the copy goes beside the script, where `import parallel_mesh` resolves."""
    (tmp_path / "modeling").mkdir()
    (tmp_path / "train.py").write_text(
        'from modeling.llama import build\n\nif __name__ == "__main__":\n    build()\n'
    )
    (tmp_path / "modeling" / "llama.py").write_text(LEGACY)
    assert _fix(tmp_path).created == [tmp_path / "parallel_mesh.py"]
