"""The pygls server: which LSP messages it answers and what each does."""

from __future__ import annotations

import asyncio
import logging
from functools import lru_cache
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from neuron_migrate import __version__
from neuron_migrate.api import rule_page
from neuron_migrate.model import FileResult
from neuron_migrate.packs.loader import Rule
from neuron_migrate.server import actions
from neuron_migrate.server.config import SettingsStore
from neuron_migrate.server.convert import (
    SOURCE,
    contains,
    diagnostic,
    document_range,
    finding_range,
    lines_of,
)
from neuron_migrate.server.documents import Cell, Checker

log = logging.getLogger(__name__)
# a check waits this long after a change for the next one, so typing does not queue checks
DEBOUNCE_SECONDS = 0.05
CONFIG_NAME = "pyproject.toml"


class MigrateServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            SOURCE,
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            notebook_document_sync=lsp.NotebookDocumentSyncOptions(
                notebook_selector=[
                    lsp.NotebookDocumentFilterWithCells(
                        cells=[lsp.NotebookCellLanguage(language="python")]
                    )
                ],
                save=True,
            ),
        )
        self.checker = Checker(SettingsStore())
        self._timers: dict[str, asyncio.TimerHandle] = {}
        # documents that have diagnostics on the client, and the open text documents, as the
        # client spells their URIs
        self._published: set[str] = set()
        self.opened: set[str] = set()

    def document(self, uri: str) -> TextDocument | None:
        """The open text document (pygls keeps them under the unquoted URI; a client's URIs
        may be quoted: `%20`)."""
        return self.workspace.text_documents.get(unquote(uri))

    # ---- publishing -------------------------------------------------------------------------

    def _report(self, result: FileResult) -> None:
        for problem in self.checker.store.problems:
            self.window_show_message(
                lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"{SOURCE}: {problem}")
            )
        self.checker.store.problems.clear()
        if result.error:
            self.window_log_message(
                lsp.LogMessageParams(
                    type=lsp.MessageType.Error, message=f"{result.path}: {result.error}"
                )
            )

    def publish(self, uri: str) -> None:
        """Check one open document (or the notebook a cell belongs to) and publish."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:
            self.publish_notebook(notebook.uri)
            return
        document = self.document(uri)
        if document is None:
            return
        checked = self.checker.check_text(uri, document.source, document.language_id)
        if checked is None:
            if uri in self._published:  # excluded since (a changed pyproject.toml)
                self.clear(uri)
            return
        self._published.add(uri)
        lines = lines_of(checked.text)
        codec = self.workspace.position_codec
        settings = checked.settings
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(
                uri=uri,
                version=document.version,
                diagnostics=[
                    diagnostic(
                        f,
                        lines,
                        codec,
                        self.checker.rule(settings, f.code),
                        document_range(f, lines, codec),
                    )
                    for f in checked.result.findings
                ],
            )
        )
        self._report(checked.result)

    def notebook_cells(self, notebook_uri: str) -> list[Cell]:
        notebook = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        cells = []
        for cell in notebook.cells if notebook is not None else []:
            text = self.workspace.get_text_document(cell.document).source
            cells.append(Cell(cell.document, text, cell.kind == lsp.NotebookCellKind.Code))
        return cells

    def publish_notebook(self, notebook_uri: str) -> None:
        checked = self.checker.check_notebook(notebook_uri, self.notebook_cells(notebook_uri))
        codec = self.workspace.position_codec
        for cell in checked.cells:
            lines = lines_of(cell.text)
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(
                    uri=cell.uri,
                    diagnostics=[
                        diagnostic(f, lines, codec, self.checker.rule(checked.settings, f.code))
                        for f in checked.findings_of(cell.uri)
                    ],
                )
            )
        self._report(checked.result)

    def clear(self, uri: str) -> None:
        self.checker.forget(uri)
        self._published.discard(uri)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )

    def publish_later(self, uri: str) -> None:
        """Check after a short pause; a newer change restarts the pause."""
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.publish(uri)
            return
        self._timers[uri] = loop.call_later(DEBOUNCE_SECONDS, self.publish_now, uri)

    def publish_now(self, uri: str) -> None:
        """Check a document or notebook now; a failure is logged, and the server goes on."""
        self._timers.pop(uri, None)
        try:
            if self.workspace.get_notebook_document(notebook_uri=uri) is not None:
                self.publish_notebook(uri)
            else:
                self.publish(uri)
        except Exception:  # noqa: BLE001 - a failed check must not stop the server
            log.exception("checking %s failed", uri)

    def republish_all(self) -> None:
        """Settings changed: check every open document again."""
        self.checker.reload()
        for uri in list(self.workspace.notebook_documents):
            self.publish_now(uri)
        for uri in list(self.opened):
            self.publish_now(uri)

    # ---- code actions and hover -------------------------------------------------------------

    def request(self, params: lsp.CodeActionParams) -> actions.Request:
        caps = self.client_capabilities.text_document
        support = caps.code_action.resolve_support if caps and caps.code_action else None
        return actions.Request(
            range=params.range,
            only=list(params.context.only) if params.context.only else None,
            unsafe=self.checker.store.client.unsafe_fixes,
            eager=support is None or "edit" not in support.properties,
            codec=self.workspace.position_codec,
            checker=self.checker,
        )

    def code_actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        request = self.request(params)
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:
            checked = self.checker.check_notebook(notebook.uri, self.notebook_cells(notebook.uri))
            return actions.cell_actions(checked, uri, request)
        document = self.document(uri)
        if document is None:
            return []
        checked = self.checker.check_text(uri, document.source, document.language_id)
        return actions.text_actions(checked, request) if checked is not None else []

    def resolve(self, action: lsp.CodeAction) -> lsp.CodeAction:
        uri = (action.data or {}).get("uri")
        document = self.document(uri) if uri else None
        if document is None:
            return action
        checked = self.checker.check_text(uri, document.source, document.language_id)
        if checked is None:
            return action
        return actions.resolve_text(checked, action, self.workspace.position_codec, self.checker)

    def hover(self, params: lsp.HoverParams) -> lsp.Hover | None:
        uri = params.text_document.uri
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:
            checked = self.checker.check_notebook(notebook.uri, self.notebook_cells(notebook.uri))
            number = checked.cell_number(uri)
            text = checked.cells[number - 1].text if number else ""
            findings, settings = checked.findings_of(uri), checked.settings
        else:
            document = self.document(uri)
            checked_text = (
                self.checker.check_text(uri, document.source, document.language_id)
                if document is not None
                else None
            )
            if checked_text is None:
                return None
            text, findings = checked_text.text, checked_text.result.findings
            settings = checked_text.settings
        lines = lines_of(text)
        codec = self.workspace.position_codec
        place = finding_range if notebook is not None else document_range
        seen: list[str] = []
        for finding in findings:
            if finding.code not in seen and contains(place(finding, lines, codec), params.position):
                seen.append(finding.code)
        rules = [self.checker.rule(settings, code) for code in seen]
        pages = [_page(rule) for rule in rules if rule is not None]
        if not pages:
            return None
        return lsp.Hover(
            contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n---\n\n".join(pages))
        )

    def watch_config(self) -> None:
        """Ask the client to report pyproject.toml changes, when it can."""
        caps = self.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps else None
        if watched is None or not watched.dynamic_registration:
            return
        self.client_register_capability(
            lsp.RegistrationParams(
                registrations=[
                    lsp.Registration(
                        id="neuron-migrate-config",
                        method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                            watchers=[lsp.FileSystemWatcher(glob_pattern=f"**/{CONFIG_NAME}")]
                        ),
                    )
                ]
            )
        )


@lru_cache(maxsize=256)
def _page(rule: Rule) -> str:
    """A rule's `explain` page (its examples run once per server, then the page is kept)."""
    return rule_page(rule)
