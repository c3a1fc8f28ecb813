"""``python -m hermes_memory`` runs the CLI (same as the ``hermes-memory`` console script)."""

import sys

from hermes_memory.cli.hookrun import is_hook_run

if is_hook_run(sys.argv[1:]):  # a client's hook: answer without loading the whole CLI
    from hermes_memory.cli.hookrun import run_main

    run_main(sys.argv[1:])
else:
    from hermes_memory.cli.main import main

    main()
