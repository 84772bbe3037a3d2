"""`neuron-migrate server`: the findings in the editor, over the Language Server Protocol.

pygls and lsprotocol are imported only here (and only when the server starts), so the command
line never pays for them.
"""

from __future__ import annotations


def serve() -> None:
    """Serve one client over stdin/stdout until it exits."""
    from neuron_migrate.server.handlers import build_server

    build_server().start_io()
