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
