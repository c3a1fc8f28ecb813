"""The real Claude Code CLI (npm, print mode) against a local Anthropic-compatible server, with our
hooks installed in its settings under a temporary HOME."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hermes_memory.providers.fencing import CONTEXT_NOTE, FENCE_CLOSE, FENCE_OPEN
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import session_search
from tests.helpers.anthropic_fake import FakeAnthropicServer
from tests.hooks.helpers import cli
from tests.hooks.npm_cli import ensure_claude


def _claude(exe: str, prompt: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([exe, "-p", prompt], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def _texts(body: dict) -> str:
    """Every text the model is shown in one request (system blocks and message blocks)."""
    out = []
    system = body.get("system")
    for b in [system] if isinstance(system, str) else system or []:
        out.append(b if isinstance(b, str) else b.get("text", ""))
    for m in body.get("messages") or []:
        c = m.get("content")
        for b in [c] if isinstance(c, str) else c or []:
            out.append(b if isinstance(b, str) else str(b.get("text") or b.get("content") or ""))
    return "\n".join(out)


def test_claude_code_request_carries_snapshot_and_fenced_recall_and_its_transcript_is_searchable(
        tmp_path: Path, hermes_home: Path) -> None:
    exe = ensure_claude()
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
    env.update(HOME=str(home), HERMES_HOME=str(hermes_home), ANTHROPIC_API_KEY="sk-ant-local-test",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    assert cli("memory", "add", "--target", "user", "The user's dog is called Biscuit.", env=env).returncode == 0
    # a generous recall budget: this box is shared; the default 1 s is for a quiet machine
    r = cli("hooks", "install", "claude-code", "--recall-budget", "10", env=env)
    assert r.returncode == 0, r.stderr
    with FakeAnthropicServer(default="Noted.") as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        first = _claude(exe, "Remember this: our staging cluster is named quokka-seven.", env, project)
        assert first.returncode == 0, first.stderr[-2000:]
        n_first = len(server.requests)
        assert n_first >= 1
        second = _claude(exe, "What is our staging cluster named?", env, project)
        assert second.returncode == 0, second.stderr[-2000:]
        later = server.requests[n_first:]
    assert later, "the second run sent no request"
    shown = [_texts(q.body) for q in later if q.method == "POST"]
    # the frozen snapshot (SessionStart) reached the model
    assert any("The user's dog is called Biscuit." in s and "## hermes-memory" in s for s in shown)
    # the fenced recall (UserPromptSubmit) of the earlier session reached the model, fenced as the agent fences
    recall = [s for s in shown if "quokka-seven" in s and CONTEXT_NOTE in s]
    assert recall, "no request carried the recalled earlier session"
    block = recall[0][recall[0].index(FENCE_OPEN + "\n" + CONTEXT_NOTE):]
    assert FENCE_CLOSE in block and "quokka-seven" in block[: block.index(FENCE_CLOSE)]
    # both transcripts are in state.db and session_search finds the first one
    with SessionDB(hermes_home / "state.db") as db:
        sessions = [s for s in db.list_sessions(limit=10) if s["source"] == "claude_code"]
        assert len(sessions) == 2
        assert all(s["ended_at"] is not None and s["cwd"] == str(project) for s in sessions)
        found = json.loads(session_search({"query": "staging cluster quokka"}, db))
    assert found["success"] and found["count"] >= 1
    snippets = [h["snippet"].replace(">>>", "").replace("<<<", "") for r in found["results"] for h in r["hits"]]
    assert any("quokka-seven" in s for s in snippets), snippets
    log = (hermes_home / "logs" / "hooks.log").read_text()
    assert " ERROR " not in log and "Traceback" not in log
