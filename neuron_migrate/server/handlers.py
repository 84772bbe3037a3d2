"""The LSP messages the server answers, each handed to a MigrateServer method."""

from __future__ import annotations

from pathlib import PurePosixPath

from lsprotocol import types as lsp

from neuron_migrate.server.actions import FIX_ALL
from neuron_migrate.server.app import CONFIG_NAME, MigrateServer
from neuron_migrate.server.config import ClientSettings


def _is_config(uri: str) -> bool:
    return PurePosixPath(uri).name == CONFIG_NAME


def register(server: MigrateServer) -> None:  # noqa: C901 - one short handler per message
    @server.feature(lsp.INITIALIZE)
    def initialize(ls: MigrateServer, params: lsp.InitializeParams) -> None:
        ls.checker.store.set_client(ClientSettings.from_client(params.initialization_options))

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: MigrateServer, params: lsp.InitializedParams) -> None:
        ls.watch_config()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MigrateServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.opened.add(params.text_document.uri)
        ls.publish_now(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MigrateServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.publish_later(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MigrateServer, params: lsp.DidSaveTextDocumentParams) -> None:
        if _is_config(params.text_document.uri):
            ls.republish_all()  # the pyproject.toml itself too (its dependencies are checked)
        else:
            ls.publish_now(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MigrateServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.opened.discard(params.text_document.uri)
        ls.clear(params.text_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: MigrateServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
        ls.publish_now(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: MigrateServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
        ls.publish_later(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: MigrateServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
        ls.publish_now(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: MigrateServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
        ls.checker.forget(params.notebook_document.uri)
        for cell in params.cell_text_documents:
            ls.clear(cell.uri)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: MigrateServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        if any(_is_config(change.uri) for change in params.changes):
            ls.republish_all()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def configuration(ls: MigrateServer, params: lsp.DidChangeConfigurationParams) -> None:
        store = ls.checker.store
        store.set_client(ClientSettings.from_client(params.settings, store.client))
        ls.republish_all()

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(
            code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL],
            resolve_provider=True,
        ),
    )
    def code_action(ls: MigrateServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return ls.code_actions(params)

    @server.feature(lsp.CODE_ACTION_RESOLVE)
    def resolve(ls: MigrateServer, params: lsp.CodeAction) -> lsp.CodeAction:
        return ls.resolve(params)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: MigrateServer, params: lsp.HoverParams) -> lsp.Hover | None:
        return ls.hover(params)


def build_server() -> MigrateServer:
    server = MigrateServer()
    register(server)
    return server
