"""A small LSP client for tests: starts `neuron-migrate server` as an editor would and speaks
JSON-RPC to it over stdio. Requests the server sends (client/registerCapability) get a null
result; notifications are kept for wait_for()."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

TIMEOUT = 60.0


def uri(path: Path) -> str:
    return path.resolve().as_uri()


class LspClient:
    def __init__(
        self, cwd: Path, init_options: dict | None = None, capabilities: dict | None = None
    ):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "neuron_migrate", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.inbox: queue.Queue = queue.Queue()
        self.notifications: list[dict] = []
        self.server_requests: list[dict] = []
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.initialize_result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri(cwd),
                "capabilities": capabilities
                if capabilities is not None
                else default_capabilities(),
                "initializationOptions": init_options or {},
            },
        )
        self.notify("initialized", {})

    # ---- wire ---------------------------------------------------------------------------------

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            assert length is not None
            self.inbox.put(json.loads(stream.read(length)))

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _next(self, deadline: float) -> dict:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no message from the server in time")
        try:
            message = self.inbox.get(timeout=remaining)
        except queue.Empty:
            raise TimeoutError("no message from the server in time") from None
        if message is None:
            raise ConnectionError(f"server exited: {self.proc.stderr.read().decode()[-3000:]}")
        if "method" in message and "id" in message:  # a request from the server
            self.server_requests.append(message)
            self._send({"id": message["id"], "result": None})
        elif "method" in message:
            self.notifications.append(message)
        return message

    def request(self, method: str, params: Any, timeout: float = TIMEOUT) -> Any:
        self._id += 1
        ident = self._id
        self._send({"id": ident, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            if message.get("id") == ident and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def wait_for(self, predicate, timeout: float = TIMEOUT) -> dict:
        """The first notification (already received or coming) for which predicate is true;
        it and everything before it are consumed."""
        deadline = time.monotonic() + timeout
        while True:
            for index, message in enumerate(self.notifications):
                if predicate(message):
                    del self.notifications[: index + 1]
                    return message
            self._next(deadline)

    def wait_for_request(self, method: str, timeout: float = TIMEOUT) -> dict:
        """A request the server sent us (already answered with null)."""
        deadline = time.monotonic() + timeout
        while True:
            for message in self.server_requests:
                if message["method"] == method:
                    return message
            self._next(deadline)

    def diagnostics(self, doc_uri: str, timeout: float = TIMEOUT) -> list[dict]:
        message = self.wait_for(
            lambda m: (
                m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == doc_uri
            ),
            timeout,
        )
        return message["params"]["diagnostics"]

    # ---- documents ------------------------------------------------------------------------------

    def open(self, path: Path, text: str | None = None, language: str = "python") -> str:
        doc = uri(path)
        text = path.read_text() if text is None else text
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": doc, "languageId": language, "version": 1, "text": text}},
        )
        return doc

    def change(self, doc: str, version: int, text: str) -> None:
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": doc, "version": version}, "contentChanges": [{"text": text}]},
        )

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a test that failed may leave the server hanging
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> LspClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def default_capabilities() -> dict:
    return {
        "textDocument": {
            "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": []}}},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "publishDiagnostics": {},
        },
        "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}},
        "notebookDocument": {"synchronization": {}},
    }


def offset(text: str, line: int, character: int) -> int:
    """A position (UTF-16 code units, as LSP counts by default) as an index into text; the
    tests use ASCII text, where the two agree."""
    lines = text.splitlines(keepends=True)
    return sum(len(x) for x in lines[:line]) + character


def apply_edits(text: str, edits: list[dict]) -> str:
    """Apply TextEdits (non-overlapping) to text."""
    spans = []
    for edit in edits:
        r = edit["range"]
        start = offset(text, r["start"]["line"], r["start"]["character"])
        end = offset(text, r["end"]["line"], r["end"]["character"])
        spans.append((start, end, edit["newText"]))
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text
