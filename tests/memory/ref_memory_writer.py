"""Run by the REFERENCE agent's python (its venv), never imported by our tests.

``<reference python> ref_memory_writer.py HOME TARGET ENTRY...`` adds each ENTRY through the
reference's own ``MemoryStore`` (its sidecar lock, its temp file + rename) to ``HOME/memories``
and prints ``{"results": [...], "entries": [...]}``. The reference's code is used unmodified.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

home = Path(sys.argv[1]).resolve()
os.environ["HERMES_HOME"] = str(home)

from tools.memory_tool import MemoryStore  # noqa: E402  (the reference, after HERMES_HOME is set)

store = MemoryStore()
store.load_from_disk()
target = sys.argv[2]
results = [store.add(target, text) for text in sys.argv[3:]]
entries = store.memory_entries if target == "memory" else store.user_entries
print(json.dumps({"results": results, "entries": entries}))
