"""The closed vocabulary of data rules: the kinds of match, the positions and argument shapes a
pattern may ask for, and the edits a `[[match]]` table may name with `action`.

Every entry here is used by more than one rule; logic that one rule needs goes in that rule's
code module (see neuron_migrate/engine/coderule.py), not here. Kept apart from the engine so
that loading packs never imports libcst.
"""

# what a `[[match]]` table matches (`kind = ...`)
MATCH_KINDS: dict[str, str] = {
    "call": "a call of a qualified name (`names`), resolved through the file's imports",
    "reference": "any use of a qualified name: a name, an attribute chain or a call",
    "import": "an import statement of a module (`names`); `unused` narrows to unused imports",
    "unused-import": "a legacy import whose names nothing uses; the fix cleans imports",
    "method": "a method call by name on any object (`.double()`, `.to_sparse()`)",
    "keyword": "a keyword argument passed to a call (`keywords`, optional `names`, `values`)",
    "env-write": "an environment variable set in code (`os.environ[...] = `, `setdefault`, ...)",
    "device-string": "a string literal naming one of the devices in `names`, used as a device",
    "code": "reported by the rule's code module (`case` names the table it reports with)",
}
# the kind read by the project-file checker (neuron_migrate/checkers/project), not in Python code:
# `reads` names the item it reads (PROJECT_ITEMS); the checker or the rule's module does the
# edit, so it takes a `safety` without an `action`
PROJECT_KINDS = frozenset({"project"})
# the engine's own kind: a file the checkers cannot read or parse (NM000, pack `engine`)
UNREADABLE_KIND = "unreadable"
ALL_KINDS = frozenset(MATCH_KINDS) | PROJECT_KINDS | {UNREADABLE_KIND}

# what the project checker reads from project files, for `reads` (kind project);
# neuron_migrate/checkers/project/api.py has the item classes a rule's module receives
PROJECT_ITEMS: dict[str, str] = {
    # requirements*.txt, pyproject.toml (PEP 621, Poetry), setup.cfg, setup.py, `pip install`
    "pin": "a dependency: its name, specifier and marker; `names` are package names (globs)",
    # an option line of a requirements file, an option of `pip install`
    "option": "a pip option (`--index-url URL`); `names` are option names (globs)",
    # requires-python (PEP 621), python_requires (setup.cfg, setup.py), Poetry's python
    "python-requires": "the Python versions a project admits",
    # `export A=1`, `A=1`, `A=1 cmd`, Docker `ENV A=1` in shell launchers and Dockerfiles
    "env": "an environment variable set by a launcher; `names` are variable names (globs)",
    # a simple command of a shell launcher or a Dockerfile RUN, after its variable assignments
    "command": "a command of a launcher; `names` are the words it starts with",
    # Dockerfile FROM
    "image": "a base image of a Dockerfile; `names` are image names (globs, no tag)",
    # every line (comments aside) of configs, launchers, Dockerfiles and pyproject.toml
    "line": "a line of text of a config, launcher or pyproject.toml; `names` are regexes",
}
# the items a case can read without a module (its `names` say what it reports)
PROJECT_DATA_ITEMS = frozenset({"pin", "option", "env", "command", "image", "line"})

# where the matched expression sits (`where = ...`)
WHERE: dict[str, str] = {
    "any": "anywhere (the default)",
    "statement": "alone as an expression statement (`xm.mark_step()`)",
    "with-item": "an item of a `with` statement",
}
# how many arguments the call passes (`args = ...`)
ARGS: dict[str, str] = {
    "any": "any (the default)",
    "none": "no argument",
    "one": "exactly one argument",
    "keywords": "at least one argument, every one a keyword (`f(a=1, b=2)`)",
}

# the edits a `[[match]]` table may name (`action = ...`), with the fields each takes
ACTION_PARAMS: dict[str, frozenset[str]] = {
    # drop the statement; an emptied block gets `pass`
    "remove-statement": frozenset(),
    # replace the matched expression by a template, e.g. "torch.device({device}, {args})";
    # for a keyword argument (kind keyword), its value (`dynamic=True` -> `dynamic=False`)
    "replace-expression": frozenset({"template", "imports"}),
    # replace the matched statement by template statements; an empty template removes it
    "replace-statement": frozenset({"template", "imports"}),
    # keep the call, give it a new function and adjust its keywords
    "rewrite-call": frozenset(
        {
            "func",
            "imports",
            "set-args",
            "set-keywords",
            "default-keywords",
            "drop-keywords",
            "drop-keyword-values",
            "rename-keywords",
            "wrap",
        }
    ),
    # `with x():` around a body: keep the body, dedented (or drop the one item)
    "unwrap-with": frozenset(),
    # swap the device part of a device string ("<old>:0" -> "<target>:0")
    "replace-device-string": frozenset(),
    # remove the unused names of an import statement (the whole statement when all are unused)
    "remove-import": frozenset(),
}

# edits that replace a whole statement rather than an expression inside it (code rules may also
# build `insert-after` and `prepend-to-body` edits, see engine/coderule.py)
STATEMENT_ACTIONS = frozenset(
    {"remove-statement", "replace-statement", "unwrap-with", "insert-after", "remove-import"}
)

# placeholders a message (and a template) may use; every finding has these, so a message built
# from them never prints a bare `{...}` (tests/test_docs_truth.py keeps messages to this set plus
# `{globN}`). `{argN}` / `{kw_<name>}` exist only when the call passes them: templates only.
MESSAGE_PLACEHOLDERS: dict[str, str] = {
    "name": "the reported code as written (`xm.mark_step`, `torch.float64`)",
    "call": "the call as written with its arguments (`xm.xla_device(1)`); `name(...)` when long",
    "qname": "what the name resolves to through the file's imports",
    "resolves_to": '" (`qname`)" when that differs from {name}, else nothing',
    "attr": "the last segment of the qualified name",
    "args": "the call's arguments as written",
    "keyword": "kind keyword: the keyword's name",
    "value": "kind keyword: the keyword's value as written",
    "var": "kind env-write: the variable's name",
    "device": 'the target device as a string literal (`"neuron"`)',
    "device_name": "the target device name (`neuron`)",
    "backend": "the target's torch.compile backend as a literal",
    "process_group": "the target's process-group backend as a literal",
    "synchronize": "the target's way to wait for the device",
}

# the fields of a `[[match]]` table
PATTERN_FIELDS: dict[str, str] = {
    "kind": "what is matched (MATCH_KINDS)",
    "names": "qualified names (`*` one segment part, `**.` any modules, `.*` anything below)",
    "where": "where the expression sits (WHERE)",
    "args": "how many arguments the call passes (ARGS)",
    "when": "a predicate function of the rule's own code module that must return true",
    "case": "kinds code and project: the label the rule's code module reports this table with",
    "reads": "kind project: the item it reads (PROJECT_ITEMS)",
    "action": "the edit that fixes it (ACTION_PARAMS); none: a manual finding",
    "safety": "safe or unsafe: what --fix needs to apply the action",
    "message": "this table's message (else the rule's); placeholders as in templates",
    "triggers": "byte regexes for the prefilter, when the names do not give good ones",
    "keywords": "the call passes at least one of these keywords",
    "no-keywords": "the call passes none of these keywords",
    "keyword-values": "the call passes these keywords with exactly this code",
    "values": "kind keyword: the keyword's value is one of these (code)",
    "unused": "kind import: the names the import binds are used nowhere else",
    "arg-values": "positional arguments with one of these values (code): { 0 = ['\"cuda\"'] }",
    "target-devices": "the table applies only when --target-device is one of these",
}
PATTERN_KEYS = frozenset(PATTERN_FIELDS) | {k for ps in ACTION_PARAMS.values() for k in ps}
