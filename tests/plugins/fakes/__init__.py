"""Local fakes of the external memory providers: HTTP servers on 127.0.0.1 (Honcho, Mem0, RetainDB, Supermemory,
Hindsight, OpenViking) and the ``brv`` CLI script (ByteRover), for the provider and contract tests."""
