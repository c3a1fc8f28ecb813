"""A hook that gave up on work past its budget exits at once, whatever that work holds.

New-user trial finding: with the PostgreSQL memory backend down, ``SessionStart`` gave up on the
snapshot at its 10 s budget but the process lived on for about 34 s, because psycopg's pool, still
opening in the abandoned thread, held the lock its exit handler waits for; Claude Code kills a
SessionStart hook at 15 s. The provider below is that shape without a network: loading it blocks
while holding a lock its own ``atexit`` handler takes, until the test releases it (no clock
involved: before the fix the hook process never exits while the lock is held).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from hermes_memory.hooks.runtime import SNAPSHOT_BUDGET
from tests.hooks.helpers import run_hook

STUCK_PLUGIN = '''
"""A provider stuck while it loads, holding the lock its exit handler needs (as a pool does)."""
import atexit
import os
import threading
import time

from hermes_memory.providers.base import MemoryProvider

_BUSY = threading.Lock()


@atexit.register
def _close_at_exit():
    with _BUSY:
        pass


with _BUSY:
    while not os.path.exists(os.environ["STUCK_RELEASE"]):
        time.sleep(0.05)


class StuckProvider(MemoryProvider):
    @property
    def name(self):
        return "stuck"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []

    def system_prompt_block(self):
        return "## Stuck provider"
'''


def test_session_start_past_its_budget_exits_though_abandoned_work_blocks_exit_handlers(
        hermes_home: Path, tmp_path: Path) -> None:
    folder = hermes_home / "plugins" / "stuck"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(STUCK_PLUGIN, encoding="utf-8")
    (hermes_home / "config.yaml").write_text("memory:\n  provider: stuck\n", encoding="utf-8")
    release = tmp_path / "release"
    try:
        r = run_hook("SessionStart", {"session_id": "stuck-1", "hook_event_name": "SessionStart"},
                     env={"STUCK_RELEASE": str(release)}, timeout=SNAPSHOT_BUDGET + 50)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError("the hook process did not exit after giving up on its snapshot") from exc
    finally:
        release.write_text("go", encoding="utf-8")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "SessionStart" in lines[0] and f"{SNAPSHOT_BUDGET:g} s" in lines[0], r.stderr
    assert "hooks.log" in lines[0]
    assert r.stdout == ""  # nothing injected: the snapshot never came
