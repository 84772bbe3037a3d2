"""The parsed rule packs kept as JSON in the per-user cache folder: a second load skips the
TOML, a changed pack misses, anything odd falls back to the TOML, the rules are the same."""

from __future__ import annotations

import dataclasses
import json
import os
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from neuron_migrate.cli import main
from neuron_migrate.config.tomlread import tomllib
from neuron_migrate.packs import loader, store
from neuron_migrate.workspace.cache import Cache

USER_PACK = """\
[pack]
name = "mine"

[lists]
old = ["old_pkg.run", "old_pkg.start"]

[[rule]]
code = "NM950"
name = "old-pkg-run"
severity = "warning"
message = "MESSAGE"
why = "Because."
fix = "Call new_pkg.run."
source = "https://example.com"
[[rule.match]]
kind = "call"
names = ["@old"]
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """An empty pack cache of the test's own and no rules loaded in this process."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(store.ENV, str(folder))
    loader._load_all.cache_clear()
    yield folder
    loader._load_all.cache_clear()


@pytest.fixture
def toml_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every TOML text the loader parses."""
    calls: list[str] = []

    def loads(text: str, **kwargs):
        calls.append(text)
        return tomllib.loads(text, **kwargs)

    fake = types.SimpleNamespace(loads=loads, TOMLDecodeError=tomllib.TOMLDecodeError)
    monkeypatch.setattr(loader, "tomllib", fake)
    return calls


def _fresh(extra: tuple[str, ...] = ()) -> tuple[loader.Rule, ...]:
    loader._load_all.cache_clear()
    return loader.load_rules(extra)


def _fields(rules) -> list[dict]:
    # asdict walks every field, those left out of == (lists, params, settings) too
    return [dataclasses.asdict(rule) for rule in rules]


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("packs-*.json"))


def test_the_session_never_writes_the_real_home():
    assert store.folder() == Path(os.environ[store.ENV])
    assert not str(store.folder()).startswith(str(Path.home() / ".cache"))


def test_a_second_load_skips_the_toml_and_builds_the_same_rules(cache_dir, toml_calls):
    from_toml = _fresh()
    assert toml_calls  # the first load parsed the packs
    assert len(_entries(cache_dir)) == 1
    toml_calls.clear()
    from_cache = _fresh()
    assert toml_calls == []
    assert from_cache == from_toml
    assert _fields(from_cache) == _fields(from_toml)
    assert any(rule.module for rule in from_cache) and any(rule.lists for rule in from_cache)


def test_a_users_pack_is_cached_and_a_change_misses(cache_dir, toml_calls, tmp_path):
    pack = tmp_path / "mine.toml"
    pack.write_text(USER_PACK)
    first = _fresh((str(pack),))
    toml_calls.clear()
    again = _fresh((str(pack),))
    assert toml_calls == [] and _fields(again) == _fields(first)
    assert next(r for r in again if r.code == "NM950").patterns[0].names == (
        "old_pkg.run",
        "old_pkg.start",
    )

    pack.write_text(USER_PACK.replace("MESSAGE", "CHANGED"))
    changed = _fresh((str(pack),))
    assert toml_calls  # parsed again
    assert next(r for r in changed if r.code == "NM950").message == "CHANGED"
    assert len(_entries(cache_dir)) == 2


def test_a_changed_pack_file_or_another_place_changes_the_key(monkeypatch, tmp_path):
    builtin = loader.builtin_rules_dir()
    here = loader.read_pack_files()
    rules = tmp_path / "rules"
    for path in loader.pack_sources(builtin):
        copy = rules / path.relative_to(builtin)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
    monkeypatch.setattr(loader, "builtin_rules_dir", lambda: rules)
    copied = loader.read_pack_files()
    # the same texts elsewhere: the results cache's digest holds, the pack cache's key does not
    assert copied.digest == here.digest and copied.key != here.key
    rule_file = next(p for p in sorted(rules.rglob("*.toml")) if p.name != loader.PACK_FILE)
    rule_file.write_text(rule_file.read_text() + "\n# a comment\n")
    edited = loader.read_pack_files()
    assert edited.key != copied.key and edited.digest != copied.digest
    module = next(rules.rglob("*.py"))  # a code module counts too
    module.write_text(module.read_text() + "\n")
    assert loader.read_pack_files().key != edited.key


def test_a_corrupt_entry_falls_back_to_the_toml(cache_dir, toml_calls):
    from_toml = _fresh()
    [entry] = _entries(cache_dir)
    for damage in (
        b"{not json",
        b"",
        b"\xff\xfe",
        json.dumps({"key": "another", "docs": {}}).encode(),
        json.dumps({"key": entry.stem[len(store.PREFIX) :], "docs": []}).encode(),
    ):
        entry.write_bytes(damage)
        toml_calls.clear()
        assert _fields(_fresh()) == _fields(from_toml)
        assert toml_calls  # a miss
        assert json.loads(entry.read_text())["docs"]  # and written again


def test_an_entry_that_does_not_build_falls_back_to_the_toml(cache_dir, toml_calls):
    from_toml = _fresh()
    [entry] = _entries(cache_dir)
    data = json.loads(entry.read_text())
    name = next(name for name, doc in data["docs"].items() if "code" in doc)
    data["docs"][name]["severity"] = "dreadful"  # a PackError from the cached documents
    entry.write_text(json.dumps(data))
    assert _fields(_fresh()) == _fields(from_toml)
    # one document missing: parsed from the TOML, the others from the entry
    data = json.loads(entry.read_text())
    data["docs"].pop(name)
    entry.write_text(json.dumps(data))
    toml_calls.clear()
    assert _fields(_fresh()) == _fields(from_toml)
    assert len(toml_calls) == 1


def test_an_unwritable_or_missing_cache_folder_is_silent(cache_dir, monkeypatch, tmp_path):
    from_toml = _fresh()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(store.ENV, str(blocker / "cache"))  # cannot be made
    assert _fields(_fresh()) == _fields(from_toml)
    assert _fields(_fresh()) == _fields(from_toml)

    # no home at all
    monkeypatch.delenv(store.ENV)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert store.folder() is None
    assert _fields(_fresh()) == _fields(from_toml)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to a read-only folder")
def test_a_read_only_cache_folder_is_silent(cache_dir):
    from_toml = _fresh()
    for entry in _entries(cache_dir):
        entry.unlink()
    cache_dir.chmod(0o500)
    try:
        assert _fields(_fresh()) == _fields(from_toml)
        assert _entries(cache_dir) == []
    finally:
        cache_dir.chmod(0o700)


def test_a_broken_users_pack_is_never_cached_and_says_the_same(cache_dir, tmp_path):
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text(USER_PACK + "oops = \n")
    invalid = tmp_path / "invalid.toml"
    invalid.write_text(USER_PACK.replace('severity = "warning"', 'severity = "dreadful"'))
    duplicate = tmp_path / "duplicate.toml"
    duplicate.write_text(USER_PACK.replace("NM950", "NM101"))
    missing = tmp_path / "missing.toml"
    for pack in (bad_toml, invalid, missing):
        with pytest.raises(loader.PackError) as direct:
            loader.load_pack(pack)  # straight from the TOML, as before the pack cache
        for _ in range(2):
            with pytest.raises(loader.PackError) as loaded:
                _fresh((str(pack),))
            assert str(loaded.value) == str(direct.value)
    with pytest.raises(loader.PackError, match="is also defined in"):
        _fresh((str(duplicate),))
    assert _entries(cache_dir) == []


def test_crlf_and_universal_newlines_parse_as_read_text_does(cache_dir, tmp_path):
    pack = tmp_path / "crlf.toml"
    text = USER_PACK.replace('why = "Because."', 'why = """Because\nof this."""')
    pack.write_bytes(text.replace("\n", "\r\n").encode())
    rule = next(r for r in _fresh((str(pack),)) if r.code == "NM950")
    assert rule.why == "Because\nof this."
    assert next(r for r in _fresh((str(pack),)) if r.code == "NM950").why == rule.why


def test_the_folder_env_var_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv(store.ENV, str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert store.folder() == tmp_path / "mine"
    monkeypatch.delenv(store.ENV)
    assert store.folder() == tmp_path / "xdg" / "neuron-migrate"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # ignored, as XDG says
    monkeypatch.setattr(Path, "home", staticmethod(lambda: tmp_path / "home"))
    assert store.folder() == tmp_path / "home" / ".cache" / "neuron-migrate"


def test_old_entries_are_pruned(cache_dir):
    for i in range(store.KEEP + 3):
        store.write(f"k{i:02}", {"a.toml": {"i": i}})
        os.utime(cache_dir / f"packs-k{i:02}.json", (1000 + i, 1000 + i))
    kept = [p.name for p in _entries(cache_dir)]
    assert len(kept) == store.KEEP and "packs-k00.json" not in kept
    assert store.read(f"k{store.KEEP + 2:02}") == {"a.toml": {"i": store.KEEP + 2}}
    assert store.read("k00") is None


def test_a_toml_value_json_cannot_hold_is_not_stored(cache_dir):
    import datetime

    store.write("dated", {"a.toml": {"when": datetime.date(2024, 1, 1)}})
    store.write("nan", {"a.toml": {"x": float("nan")}})
    assert _entries(cache_dir) == []


def test_the_results_cache_keys_on_the_files_the_rules_were_read_from(
    cache_dir, monkeypatch, tmp_path
):
    pack = tmp_path / "mine.toml"
    pack.write_text(USER_PACK)
    rules = _fresh((str(pack),))
    read_now = loader.read_pack_files((str(pack),)).digest
    assert loader.pack_digest((str(pack),)) == read_now

    def no_second_read(*args):
        raise AssertionError("the pack files were read twice")

    with monkeypatch.context() as patched:
        patched.setattr(loader, "read_pack_files", no_second_read)
        first = Cache.for_run(tmp_path, rules, "settings", (str(pack),)).file
        # the rules in memory are those of the old text: so are the results filed under its key
        pack.write_text(USER_PACK.replace("MESSAGE", "CHANGED"))
        assert Cache.for_run(tmp_path, rules, "settings", (str(pack),)).file == first
    changed = _fresh((str(pack),))
    assert Cache.for_run(tmp_path, changed, "settings", (str(pack),)).file != first
    # packs never loaded in this process are read now
    other = tmp_path / "other.toml"
    other.write_text(USER_PACK)
    assert loader.pack_digest((str(other),)) == loader.read_pack_files((str(other),)).digest


def test_clean_removes_the_parsed_packs_and_nothing_else(cache_dir, tmp_path):
    _fresh()
    assert _entries(cache_dir)
    (cache_dir / "someone-elses.txt").write_text("keep me")
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(main, ["clean"])
        assert result.exit_code == 0 and "parsed rule packs" in result.output
        assert _entries(cache_dir) == []
        assert (cache_dir / "someone-elses.txt").read_text() == "keep me"
        assert "No cache to remove." in CliRunner().invoke(main, ["clean"]).output
    finally:
        os.chdir(old)
