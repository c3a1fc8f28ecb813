"""Command-line interface (typer + rich). The only package that prints.

One module per command group; :mod:`hermes_memory.cli.main` wires them together.
Exit codes: 0 ok, 1 refused or not found, 2 usage or configuration error.
"""
