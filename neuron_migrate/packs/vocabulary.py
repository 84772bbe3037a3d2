"""The names of the edits a rule can ask for, and the fields each takes in a pack.

Kept apart from the implementations so that loading packs never imports libcst.
"""

ACTION_PARAMS: dict[str, frozenset[str]] = {
    # drop the statement; an emptied block gets `pass`
    "remove-statement": frozenset(),
    # replace the matched expression by a template, e.g. "torch.device({device}, {args})"
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
    # a keyword argument's value becomes the template (`dynamic=True` -> `dynamic=False`)
    "set-value": frozenset({"template", "imports"}),
    # drop the matched keyword argument from its call
    "remove-argument": frozenset(),
    # `for b in loader:` gets the plain loader and `b = b.to(device)` at the top of its body
    "unwrap-device-loader": frozenset({"imports"}),
    # `with x():` around a body: keep the body, dedented (or drop the one item)
    "unwrap-with": frozenset(),
    # swap the device part of a device string ("xla:0" -> "neuron:0")
    "replace-device-string": frozenset(),
    # add statements after the matched statement, e.g. "{target} = torch.compile({target})"
    "insert-after": frozenset({"template", "imports"}),
    # remove the unused names of an import statement (the whole statement when all are unused)
    "remove-import": frozenset(),
}

# actions that replace a whole statement rather than an expression inside it
STATEMENT_ACTIONS = frozenset(
    {"remove-statement", "replace-statement", "unwrap-with", "insert-after", "remove-import"}
)

# What the project checker (neuron_migrate/checkers/project) reads from project files, for the
# `reads` field of a `kind = "project"` match; neuron_migrate/checkers/project/api.py has the
# item classes a rule's module receives, and what `names` means when a rule has no module.
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
    "line": "a line of text of a config, launcher or pyproject.toml",
}
# the item types a case can read without a module (its `names` say what it reports)
PROJECT_DATA_ITEMS = frozenset({"pin", "option", "env", "command", "image", "line"})
