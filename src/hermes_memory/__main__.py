"""``python -m hermes_memory`` runs the CLI (same as the ``hermes-memory`` console script)."""

from hermes_memory.cli.main import main

main()
