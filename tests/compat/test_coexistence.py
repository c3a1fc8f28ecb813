"""Coexistence: a long-running ``serve --transport http`` (real MCP client over HTTP), our SessionDB and
the real reference agent (a long-running process of its own) write, search and delete in the same
state.db by turns, a few hundred operations. Both keep working; neither side ever rebuilds an index."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest

from hermes_memory.sessions.db import SessionDB
from tests.compat.helpers import HELPER, REFERENCES, assert_reference_healthy, our_meta, ref, ref_python
from tests.mcp.helpers import HttpServer, call, http_session

TURNS = 60
"""Turns of 5 operations (plus a delete round every 5th turn): 300+ operations in all."""


class RefLoop:
    """``ref_agent.py loop``: one reference SessionDB kept open, one JSON command per line."""

    def __init__(self, version: str, home: Path) -> None:
        self.proc = subprocess.Popen([str(ref_python(version)), str(HELPER), "loop", str(home)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def __call__(self, **cmd: object) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"reference loop died: {self.proc.stderr.read() if self.proc.stderr else ''}"
        out = json.loads(line)
        assert "error" not in out, out
        return out

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin
            self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=30)


@pytest.mark.parametrize("version", list(REFERENCES))
def test_serve_http_and_reference_by_turns_never_rebuild(version: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    ref(version, "build", home, {"config": False})
    ops = 0
    with HttpServer(home) as server:
        reference = RefLoop(version, home)
        ours = SessionDB(home / "state.db")
        try:
            async def turns() -> int:
                n = 0
                async with http_session(server.url) as mcp:
                    for i in range(TURNS):
                        rid = reference(op="write", sid=f"r{i}", text=f"zebra{i} wrote by the reference")["id"]
                        found = await call(mcp, "session_search", {"query": f"zebra{i}"})
                        assert [r["session_id"] for r in found["results"]] == [f"r{i}"], (i, found)
                        ours.create_session(f"o{i}")
                        oid = ours.append_message(f"o{i}", "user", f"yak{i} wrote by hermes-memory")
                        assert reference(op="search", query=f"yak{i}")["ids"] == [oid]
                        assert [r["id"] for r in ours.search_messages(f"zebra{i}")] == [rid]
                        n += 5
                        if i % 5 == 4:
                            assert reference(op="delete", sid=f"o{i - 1}")["deleted"] is True
                            assert ours.delete_session(f"r{i - 1}") is True
                            gone = await call(mcp, "session_search", {"query": f"zebra{i - 1}"})
                            assert gone["results"] == [], gone
                            assert reference(op="search", query=f"yak{i - 1}")["ids"] == []
                            n += 4
                return n

            ops = anyio.run(turns)
            last = reference(op="search", query="walrus")
            assert len(last["ids"]) == 3
            assert last["rebuilds"] == [], last["rebuilds"]
            assert not [line for line in last["log"] if "malformed" in line], last["log"]
        finally:
            ours.close()
            reference.close()
        assert "malformed" not in server.stderr()
    assert ops >= 300
    meta = our_meta(home)
    assert meta["full_builds"] == "1" and "catch_ups" not in meta, meta  # the first open's build only
    assert_reference_healthy(version, home)
