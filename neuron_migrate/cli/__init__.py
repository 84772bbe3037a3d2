"""The command line: parses options, calls the library API, prints, sets the exit code."""

from neuron_migrate.cli.app import main

__all__ = ["main"]
