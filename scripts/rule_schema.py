"""Write the JSON Schemas of rule files from the loader's known keys, and point every built-in
rule file at them (the `#:schema` header of Taplo / Even Better TOML, so editors complete fields).

    python scripts/rule_schema.py           # rewrite rules/*.schema.json and the headers
    python scripts/rule_schema.py --check   # exit 1 if anything is stale (what the test checks)

- rules/rule.schema.json: one rule file (`rules/<pack>/NM123_name.toml`): code, name, severity,
  message, why, fix, source, ok, [[match]], [[example]].
- rules/pack.schema.json: a pack's `pack.toml` ([pack], [lists]), or a one-file pack with its
  [[rule]] tables.

The key sets and the closed vocabularies (kinds, where, args, when, actions and their fields)
come from neuron_migrate.packs; this file adds only the type and a line of help for each
field. A key the loader knows and this file does not describe stops the script (and
tests/test_rule_schema.py), so the two cannot drift.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neuron_migrate.config.tomlread import tomllib  # noqa: E402
from neuron_migrate.model import Severity  # noqa: E402
from neuron_migrate.packs import loader, vocabulary  # noqa: E402
from neuron_migrate.packs.vocabulary import ACTION_PARAMS  # noqa: E402

RULES = REPO / "rules"
RULE_SCHEMA = RULES / "rule.schema.json"
PACK_SCHEMA = RULES / "pack.schema.json"
DRAFT = "http://json-schema.org/draft-07/schema#"
# the header line of each file; relative to the file, so it works in a checkout and in a wheel
RULE_DIRECTIVE = "#:schema ../rule.schema.json"
PACK_DIRECTIVE = "#:schema ../pack.schema.json"

TARGETS = tomllib.loads((RULES / "targets.toml").read_text(encoding="utf-8"))["target"]
TEXT = {"type": "string", "minLength": 1}
# the loader takes one string where it takes a list; "@name" stands for the pack's [lists] name
TEXTS = {"anyOf": [TEXT, {"type": "array", "items": TEXT}]}
TABLE = {"type": "object", "additionalProperties": {"type": "string"}}


def _doc(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description}


def _enum(values: Any, description: str) -> dict[str, Any]:
    return {"type": "string", "enum": sorted(values), "description": description}


def _choice(values: dict[str, str], description: str) -> dict[str, Any]:
    """An enum whose help lists each value with its documentation."""
    lines = [description] + [f"- {key}: {doc}" for key, doc in sorted(values.items())]
    return _enum(values, "\n".join(lines))


# the type of each [[match]] field that is not an action's; its help is the vocabulary's
MATCH_TYPES: dict[str, dict[str, Any]] = {
    "kind": _choice(
        {
            **vocabulary.MATCH_KINDS,
            **{k: "read by the project-file checker" for k in vocabulary.PROJECT_KINDS},
            vocabulary.UNREADABLE_KIND: "the engine's own: a file it cannot read or parse",
        },
        vocabulary.PATTERN_FIELDS["kind"],
    ),
    "names": TEXTS,
    "where": _choice(vocabulary.WHERE, vocabulary.PATTERN_FIELDS["where"]),
    "args": _choice(vocabulary.ARGS, vocabulary.PATTERN_FIELDS["args"]),
    "when": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
    "case": {"type": "string", "pattern": loader.NAME_RE.pattern},
    "action": _enum(ACTION_PARAMS, vocabulary.PATTERN_FIELDS["action"]),
    "safety": {"type": "string", "enum": ["safe", "unsafe"]},
    "message": TEXT,
    "triggers": TEXTS,
    "keywords": TEXTS,
    "no-keywords": TEXTS,
    "keyword-values": TABLE,
    "values": TEXTS,
    "unused": {"type": "boolean"},
    "arg-values": {
        "type": "object",
        "propertyNames": {"pattern": "^[0-9]+$"},
        "additionalProperties": TEXTS,
    },
    "target-devices": TEXTS,
    "reads": _choice(vocabulary.PROJECT_ITEMS, vocabulary.PATTERN_FIELDS["reads"]),
}
MATCH_FIELDS: dict[str, dict[str, Any]] = {
    key: {"description": doc, **MATCH_TYPES[key]} if key in MATCH_TYPES else {}
    for key, doc in vocabulary.PATTERN_FIELDS.items()
}
# fields an action takes (neuron_migrate/packs/vocabulary.py says which action takes which)
ACTION_FIELDS: dict[str, dict[str, Any]] = {
    "template": _doc(
        TEXT,
        "Code the fix writes; placeholders such as {name} {qname} {args} {arg0} {kw_NAME} "
        "{device} (the pack.toml header lists them).",
    ),
    "imports": _doc(TEXTS, 'Import statements the fix adds when missing ("import torch").'),
    "func": _doc(TEXT, "rewrite-call: the new function (a template)."),
    "set-args": _doc(TABLE, "rewrite-call: positional argument index -> new code."),
    "set-keywords": _doc(TABLE, "rewrite-call: keyword -> new code (set or replaced)."),
    "default-keywords": _doc(TABLE, "rewrite-call: keyword -> code, added when not passed."),
    "drop-keywords": _doc(TEXTS, "rewrite-call: keywords to remove."),
    "drop-keyword-values": _doc(
        {"type": "object", "additionalProperties": TEXTS},
        "rewrite-call: keyword -> the values (code) for which it is removed.",
    ),
    "rename-keywords": _doc(TABLE, "rewrite-call: old keyword -> new keyword."),
    "wrap": _doc(TEXT, "rewrite-call: a template around the new call ({call})."),
}
RULE_FIELDS: dict[str, dict[str, Any]] = {
    "code": {
        "type": "string",
        "pattern": loader.CODE_RE.pattern,
        "description": "NM, an optional capital letter (a pack's), three digits; public, never reused.",
    },
    "name": {
        "type": "string",
        "pattern": loader.NAME_RE.pattern,
        "description": "kebab-case; public, usable wherever a code is (select, noqa).",
    },
    "severity": _enum({s.value for s in Severity}, "How serious the finding is."),
    "message": _doc(
        TEXT, "One line: what was found and what to use instead; placeholders as in templates."
    ),
    "why": _doc(TEXT, "Why the code has to change (shown by `neuron-migrate explain`)."),
    "fix": _doc(TEXT, "What the fix does, and why it is safe, unsafe or manual."),
    "source": {
        "type": "string",
        "pattern": "^https://",
        "description": "The page the mapping comes from.",
    },
    "ok": _doc(
        {
            "anyOf": [
                {"$ref": "#/definitions/ok-item"},
                {"type": "array", "items": {"$ref": "#/definitions/ok-item"}},
            ]
        },
        "Code the rule must not report (tests). A string is a Python file; "
        '{ file = "run.sh", code = "..." } names the file.',
    ),
    "match": _doc(
        {"type": "array", "minItems": 1, "items": {"$ref": "#/definitions/match"}},
        "What the rule finds, tried in order; the first that matches a node wins.",
    ),
    "example": _doc(
        {"type": "array", "items": {"$ref": "#/definitions/example"}},
        "before/after pairs, run as tests (tests/test_rule_examples.py).",
    ),
}
REQUIRED = ["code", "name", "severity", "message", "why", "fix", "source", "match"]
EXAMPLE_FIELDS: dict[str, dict[str, Any]] = {
    "before": _doc(TEXT, "The code as written; the rule must report it."),
    "after": _doc(TEXT, "What --fix writes (with the settings); leave out for a manual rule."),
    "file": _doc(TEXT, "The file's name (picks the checker: requirements.txt, run.sh...)."),
    "settings": {
        "type": "object",
        "additionalProperties": False,
        "description": "Options the example runs with (tests/test_rule_examples.py reads them).",
        "properties": {
            "target-device": _enum(TARGETS, "--target-device (rules/targets.toml)"),
            "unsafe-fixes": _doc({"type": "boolean"}, "--unsafe-fixes"),
            "compile": _doc({"type": "boolean"}, "--compile"),
        },
    },
}


def _described(keys: set[str], fields: dict[str, dict[str, Any]], what: str) -> None:
    missing = sorted(keys - set(fields))
    extra = sorted(set(fields) - keys)
    if missing or extra:
        raise SystemExit(
            f"scripts/rule_schema.py is out of step with the loader's {what}: "
            f"describe {missing} / drop {extra}"
        )


def _action_conditions() -> list[dict[str, Any]]:
    """An action's fields go with that action only; an action needs a safety; kind code needs
    a case (a project kind may have one) and a project kind needs `reads`."""
    params = sorted({key for keys in ACTION_PARAMS.values() for key in keys})
    out: list[dict[str, Any]] = [
        {
            "if": {"required": ["action"]},
            "then": {"required": ["safety"]},
            "else": {"properties": {key: False for key in params}},
        }
    ]
    project = sorted(vocabulary.PROJECT_KINDS)
    out.append(
        {
            "if": {"properties": {"kind": {"const": "code"}}, "required": ["kind"]},
            "then": {"required": ["case"]},
        }
    )
    out.append(
        {
            "if": {"properties": {"kind": {"enum": ["code", *project]}}, "required": ["kind"]},
            "else": {"properties": {"case": False}},
        }
    )
    out.append(
        {
            "if": {"properties": {"kind": {"enum": project}}, "required": ["kind"]},
            "then": {"required": ["reads"]},
            "else": {"properties": {"reads": False}},
        }
    )
    for action, allowed in sorted(ACTION_PARAMS.items()):
        banned = [key for key in params if key not in allowed]
        if banned:
            out.append(
                {
                    "if": {"properties": {"action": {"const": action}}, "required": ["action"]},
                    "then": {"properties": {key: False for key in banned}},
                }
            )
    return out


def rule_schema() -> dict[str, Any]:
    action_keys = {key for keys in ACTION_PARAMS.values() for key in keys}
    _described(loader.RULE_KEYS, RULE_FIELDS, "RULE_KEYS")
    _described(vocabulary.PATTERN_KEYS - action_keys, MATCH_TYPES, "PATTERN_KEYS")
    _described(set(vocabulary.ALL_KINDS), dict.fromkeys(MATCH_TYPES["kind"]["enum"]), "ALL_KINDS")
    _described(action_keys, ACTION_FIELDS, "action fields (vocabulary.ACTION_PARAMS)")
    _described(set(loader.Example.__dataclass_fields__), EXAMPLE_FIELDS, "Example fields")
    match_fields = {**MATCH_FIELDS, **ACTION_FIELDS}
    return {
        "$schema": DRAFT,
        "title": "neuron-migrate rule",
        "description": "One rule file: rules/<pack>/NM123_name.toml (generated by "
        "scripts/rule_schema.py from neuron_migrate/packs; do not edit).",
        "type": "object",
        "additionalProperties": False,
        "required": REQUIRED,
        "properties": {key: RULE_FIELDS[key] for key in sorted(RULE_FIELDS)},
        "definitions": {
            "match": {
                "type": "object",
                "additionalProperties": False,
                "required": ["kind"],
                "properties": {key: match_fields[key] for key in sorted(match_fields)},
                "allOf": _action_conditions(),
            },
            "example": {
                "type": "object",
                "additionalProperties": False,
                "required": ["before"],
                "properties": EXAMPLE_FIELDS,
            },
            "ok-item": {
                "anyOf": [
                    TEXT,
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["file", "code"],
                        "properties": {"file": TEXT, "code": TEXT},
                    },
                ]
            },
        },
    }


def pack_schema() -> dict[str, Any]:
    return {
        "$schema": DRAFT,
        "title": "neuron-migrate rule pack",
        "description": "A pack folder's pack.toml, or a one-file pack with [[rule]] tables "
        "(generated by scripts/rule_schema.py; do not edit).",
        "type": "object",
        "additionalProperties": False,
        "required": ["pack"],
        "properties": {
            "pack": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name"],
                "properties": {
                    "name": _doc(TEXT, "The pack's name (select it with `--select PACK`)."),
                    "description": _doc(TEXT, "One line for `neuron-migrate rules`."),
                    "default": _doc(
                        {"type": "boolean"},
                        "false: an opt-in pack, on only when selected (its prefix, a code, a "
                        "name or ALL); its codes carry a letter after NM (NMC101).",
                    ),
                    "from-device": _doc(
                        TEXT,
                        "The device the pack's code moves away from: with that --target-device "
                        "the pack has nothing to say.",
                    ),
                },
            },
            "lists": {
                "type": "object",
                "description": 'Shared name lists: "@key" in any rule\'s list stands for one.',
                "additionalProperties": {"type": "array", "items": TEXT},
            },
            "rule": {
                "type": "array",
                "minItems": 1,
                "description": "A one-file pack's rules (a pack folder has one file per rule).",
                "items": {"$ref": "rule.schema.json"},
            },
        },
    }


def dump(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=False) + "\n"


def rule_files() -> list[Path]:
    packs = sorted(p.parent for p in RULES.glob(f"*/{loader.PACK_FILE}"))
    return [path for pack in packs for path in loader.rule_files(pack)]


def pack_files() -> list[Path]:
    return sorted(p for p in RULES.glob(f"*/{loader.PACK_FILE}"))


def with_directive(text: str, directive: str) -> str:
    """The file's text with `directive` as its first line (replacing an older one)."""
    lines = text.splitlines(keepends=True)
    if lines and lines[0].startswith("#:schema"):
        lines = lines[1:]
    return directive + "\n" + "".join(lines)


def stale() -> dict[Path, str]:
    """Every file whose text is not what it should be, with that text."""
    wanted = {RULE_SCHEMA: dump(rule_schema()), PACK_SCHEMA: dump(pack_schema())}
    for directive, files in ((RULE_DIRECTIVE, rule_files()), (PACK_DIRECTIVE, pack_files())):
        for path in files:
            wanted[path] = with_directive(path.read_text(encoding="utf-8"), directive)
    return {
        path: text
        for path, text in wanted.items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if anything is stale")
    args = parser.parse_args()
    changes = stale()
    for path, text in changes.items():
        print(f"{'stale' if args.check else 'wrote'}: {path.relative_to(REPO)}")
        if not args.check:
            path.write_text(text, encoding="utf-8")
    return 1 if args.check and changes else 0


if __name__ == "__main__":
    raise SystemExit(main())
