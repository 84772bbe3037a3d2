"""Code actions: fix this finding, fix all safe findings (`source.fixAll.neuron-migrate`),
unsafe fixes only when the client allows them, and `# noqa: CODE`.

Each action's edit is made when asked for (codeAction/resolve) if the client can resolve edits,
else at once; either way from the document's current text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from neuron_migrate.adoption.addnoqa import add_noqa_text
from neuron_migrate.api import fix_options
from neuron_migrate.checkers.base import PARSE_ERROR as PARSE_ERROR_RULE
from neuron_migrate.checkers.base import finding_key
from neuron_migrate.model import Finding, Safety
from neuron_migrate.server.convert import finding_range, lines_of, overlaps, text_edits
from neuron_migrate.server.documents import Checked, Checker, NotebookChecked, notebook_json
from neuron_migrate.workspace.filekinds import kind_of

FIX_ALL = "source.fixAll.neuron-migrate"
PARSE_ERROR = PARSE_ERROR_RULE[0]  # a file that does not parse: nothing to fix or silence


@dataclass
class Request:
    """What one codeAction request needs beside the document."""

    range: lsp.Range
    only: list[str] | None
    unsafe: bool
    eager: bool
    codec: PositionCodec
    checker: Checker

    def wants(self, kind: str) -> bool:
        return self.only is None or any(kind == k or kind.startswith(k + ".") for k in self.only)


def _fixable(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    return fix is not None and (fix.safety is Safety.SAFE or unsafe)


def _all_title(unsafe: bool) -> str:
    which = "safe and unsafe" if unsafe else "safe"
    return f"neuron-migrate: fix all {which} findings"


def _action(title: str, kind: str, data: dict[str, Any], **more: Any) -> lsp.CodeAction:
    return lsp.CodeAction(title=title, kind=kind, data=data, **more)


# ---- text documents -----------------------------------------------------------------------


def text_actions(checked: Checked, request: Request) -> list[lsp.CodeAction]:
    lines = lines_of(checked.text)
    actions: list[lsp.CodeAction] = []
    # one finding at a time in Python and project files; a notebook opened as JSON text gets
    # the fix of all (its findings' positions are in cells, not in the JSON)
    here = [
        f
        for f in checked.result.findings
        if f.cell is None and overlaps(finding_range(f, lines, request.codec), request.range)
    ]
    if request.wants(lsp.CodeActionKind.QuickFix):
        for finding in here:
            data = {"uri": checked.uri, "do": "fix", "key": list(finding_key(finding))}
            if _fixable(finding, request.unsafe):
                unsafe = finding.fix is not None and finding.fix.safety is Safety.UNSAFE
                actions.append(
                    _action(
                        f"Fix {finding.code}: {finding.message}"
                        + (" (unsafe fix)" if unsafe else ""),
                        lsp.CodeActionKind.QuickFix,
                        data,
                        is_preferred=not unsafe,
                    )
                )
            if finding.code != PARSE_ERROR and kind_of(checked.filename) == "python":
                actions.append(
                    _action(
                        f"Disable {finding.code} for this line (# noqa: {finding.code})",
                        lsp.CodeActionKind.QuickFix,
                        {**data, "do": "noqa"},
                    )
                )
    if request.wants(FIX_ALL) and any(_fixable(f, request.unsafe) for f in checked.result.findings):
        actions.append(_action(_all_title(request.unsafe), FIX_ALL, {"uri": checked.uri}))
    for action in actions:
        action.data["unsafe"] = request.unsafe
        if request.eager:
            resolve_text(checked, action, request.codec, request.checker)
    # made at once, an action that came to nothing (a fix that declined) is not offered
    return [a for a in actions if not request.eager or a.edit is not None]


def _finding(findings: list[Finding], key: list) -> Finding | None:
    return next((f for f in findings if list(finding_key(f)) == key), None)


def _text_fix(checked: Checked, checker: Checker, findings, unsafe: bool) -> str | None:
    options = fix_options(findings, unsafe)
    result = checker.run(checked.text, checked.filename, checked.settings, options)
    return result.fixed_source


def resolve_text(
    checked: Checked, action: lsp.CodeAction, codec: PositionCodec, checker: Checker
) -> lsp.CodeAction:
    """Give the action its edit, made from the document as last checked."""
    data = action.data or {}
    unsafe = bool(data.get("unsafe"))
    new: str | None = None
    if action.kind == FIX_ALL or data.get("do") is None:
        new = _text_fix(checked, checker, None, unsafe)
    else:
        finding = _finding(checked.result.findings, data.get("key") or [])
        if finding is not None and data["do"] == "noqa":
            new = add_noqa_text(checked.text, [finding])[0]
        elif finding is not None:
            new = _text_fix(checked, checker, [finding], unsafe)
    if new is not None and new != checked.text:
        edits = text_edits(checked.text, new, codec)
        action.edit = lsp.WorkspaceEdit(changes={checked.uri: edits})
    return action


# ---- notebook cells -----------------------------------------------------------------------


def cell_actions(checked: NotebookChecked, cell_uri: str, request: Request) -> list:
    actions: list[lsp.CodeAction] = []
    number = checked.cell_number(cell_uri)
    if number is None:
        return actions
    cell = checked.cells[number - 1]
    lines = lines_of(cell.text)
    findings = checked.findings_of(cell_uri)
    if request.wants(lsp.CodeActionKind.QuickFix):
        for finding in findings:
            if finding.code == PARSE_ERROR:
                continue
            if not overlaps(finding_range(finding, lines, request.codec), request.range):
                continue
            if _fixable(finding, request.unsafe):
                edit = _notebook_fix(checked, request, [finding])
                if edit is not None:
                    unsafe = finding.fix is not None and finding.fix.safety is Safety.UNSAFE
                    actions.append(
                        lsp.CodeAction(
                            title=f"Fix {finding.code}: {finding.message}"
                            + (" (unsafe fix)" if unsafe else ""),
                            kind=lsp.CodeActionKind.QuickFix,
                            is_preferred=not unsafe,
                            edit=edit,
                        )
                    )
            new = add_noqa_text(cell.text, [finding])[0]
            if new != cell.text:
                edits = text_edits(cell.text, new, request.codec)
                actions.append(
                    lsp.CodeAction(
                        title=f"Disable {finding.code} for this line (# noqa: {finding.code})",
                        kind=lsp.CodeActionKind.QuickFix,
                        edit=lsp.WorkspaceEdit(changes={cell_uri: edits}),
                    )
                )
    if request.wants(FIX_ALL) and any(_fixable(f, request.unsafe) for f in checked.result.findings):
        edit = _notebook_fix(checked, request)
        if edit is not None:
            actions.append(
                lsp.CodeAction(
                    title=_all_title(request.unsafe) + " in the notebook", kind=FIX_ALL, edit=edit
                )
            )
    return actions


def _notebook_fix(
    checked: NotebookChecked, request: Request, findings: list[Finding] | None = None
) -> lsp.WorkspaceEdit | None:
    """Fix the notebook (all its fixable findings, or only `findings`); an edit for each cell
    that changed."""
    options = fix_options(findings, request.unsafe)
    result = request.checker.run(
        notebook_json(checked.cells), checked.filename, checked.settings, options
    )
    if result.fixed_source is None:
        return None
    sources = [c.get("source", "") for c in json.loads(result.fixed_source)["cells"]]
    changes: dict[str, list[lsp.TextEdit]] = {}
    for cell, new in zip(checked.cells, sources):
        new = "".join(new) if isinstance(new, list) else new
        if new != cell.text:
            changes[cell.uri] = text_edits(cell.text, new, request.codec)
    return lsp.WorkspaceEdit(changes=changes) if changes else None
