"""Hook entry points speak the clients' protocol: one JSON document or nothing, exit 0, never a
veto, within their timeouts (failure cases C04, C06, C07, C09)."""

from __future__ import annotations

import json
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.hooks.clients import CLAUDE_CODE
from hermes_memory.providers.fencing import build_memory_context_block
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import session_search
from tests.helpers.values import present
from tests.hooks.helpers import Transcript, install_noisy_plugin, run_hook

EVENTS = ["SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"]


def _payload(event: str, sid: str, transcript: Path | None, **extra: object) -> dict:
    base = {"session_id": sid, "hook_event_name": event, "cwd": "/home/dev/proj", "permission_mode": "default"}
    if transcript is not None:
        base["transcript_path"] = str(transcript)
    per_event: dict[str, dict[str, Any]] = {"SessionStart": {"source": "startup", "model": "claude-sonnet-4-5"},
                 "UserPromptSubmit": {"prompt": "which cluster do we deploy the zebrafish service to?"},
                 "PreCompact": {"trigger": "manual", "custom_instructions": ""},
                 "Stop": {"stop_hook_active": False},
                 "SessionEnd": {"reason": "prompt_input_exit"}}
    return {**base, **per_event[event], **extra}


@pytest.fixture()
def earlier_session(tmp_path: Path, hermes_home: Path) -> Transcript:
    """An earlier Claude Code session, imported through the Stop hook."""
    t = Transcript(tmp_path / "projects" / "p" / "old-session.jsonl", "old-session")
    t.turn("We deploy the zebrafish service to the cluster named quokka-seven.", "Noted, quokka-seven.")
    r = run_hook("Stop", _payload("Stop", "old-session", t.path))
    assert r.returncode == 0 and r.stdout == "", r.stderr
    return t


def test_c04_every_event_prints_exactly_one_json_document_or_nothing(tmp_path: Path, hermes_home: Path,
                                                                      earlier_session: Transcript) -> None:
    install_noisy_plugin(hermes_home)
    t = Transcript(tmp_path / "projects" / "p" / "live.jsonl", "live")
    t.turn("hello there, let us talk about zebrafish", "Sure.")
    env = {"PYTHONWARNINGS": "always"}
    stderr = ""
    for event in EVENTS:
        r = run_hook(event, _payload(event, "live", t.path), env=env, budget=20)
        stderr += r.stderr
        assert r.returncode == 0, (event, r.stderr)
        assert "NOISY" not in r.stdout and "Warning" not in r.stdout
        if event in ("SessionStart", "UserPromptSubmit"):
            doc = json.loads(r.stdout)  # the WHOLE stdout is one document
            assert doc["hookSpecificOutput"]["hookEventName"] == event
            assert set(doc) == {"hookSpecificOutput"} and "decision" not in r.stdout
            assert doc["hookSpecificOutput"]["additionalContext"].strip()
        else:
            assert r.stdout == "", (event, r.stdout)
    assert "NOISY BANNER" in stderr and "NOISY raw fd write" in stderr  # prints went to stderr, not stdout


def test_session_start_carries_the_frozen_snapshot_guidance_and_provider_block(hermes_home: Path) -> None:
    install_noisy_plugin(hermes_home)
    from hermes_memory.memory import MemoryStore

    store = MemoryStore(hermes_home / "memories")
    store.load_from_disk()
    store.add("user", "The user's dog is called Biscuit.")
    store.add("memory", "Builds run with make ci, never plain pytest.")
    r = run_hook("SessionStart", _payload("SessionStart", "s-start", None))
    ctx = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    for part in ("## hermes-memory", "## Memory", "## Past conversations", "The user's dog is called Biscuit.",
                 "Builds run with make ci", "noisy-provider-block-marker"):
        assert part in ctx, part
    with SessionDB(hermes_home / "state.db") as db:
        row = present(db.get_session("cc-s-start"))
    assert row["source"] == "claude_code" and row["system_prompt"] == ctx and row["cwd"] == "/home/dev/proj"
    # frozen: a write after the start does not change what this session was given
    store.add("user", "The user moved to Lisbon.")
    with SessionDB(hermes_home / "state.db") as db:
        assert "Lisbon" not in present(db.get_session("cc-s-start"))["system_prompt"]


def test_recall_is_fenced_exactly_as_the_agent_fences_it(hermes_home: Path, earlier_session: Transcript) -> None:
    install_noisy_plugin(hermes_home)
    prompt = "which cluster do we deploy the zebrafish service to?"
    r = run_hook("UserPromptSubmit", _payload("UserPromptSubmit", "new-session", None, prompt=prompt), budget=20)
    ctx = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "quokka-seven" in ctx and "noisy-recall-marker" in ctx
    # the block is build_memory_context_block of its body: same fence, same note, sanitised body
    body = ctx.split("\n\n", 1)[1].rsplit("\n</memory-context>", 1)[0]
    assert ctx == build_memory_context_block(body)
    assert ctx.count("<memory-context>") == 1 and ctx.count("</memory-context>") == 1


def test_recall_leaves_out_the_current_session_and_trivial_prompts(hermes_home: Path,
                                                                  earlier_session: Transcript) -> None:
    r = run_hook("UserPromptSubmit", _payload("UserPromptSubmit", "old-session", None,
                                              prompt="zebrafish quokka-seven cluster"), budget=20)
    assert r.returncode == 0 and r.stdout == ""  # the only match is the live session itself
    for trivial in ("ok", "thanks!", "/compact", "   "):
        r = run_hook("UserPromptSubmit", _payload("UserPromptSubmit", "other", None, prompt=trivial), budget=20)
        assert r.returncode == 0 and r.stdout == "", trivial


def test_c06_dead_provider_endpoint_and_locked_state_db_never_block(hermes_home: Path, tmp_path: Path,
                                                                    earlier_session: Transcript) -> None:
    install_noisy_plugin(hermes_home)
    t = Transcript(tmp_path / "projects" / "p" / "c06.jsonl", "c06")
    t.turn("a zebrafish question", "an answer")
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        r = run_hook(event, _payload(event, "c06", t.path), env={"NOISY_MODE": "dead"}, budget=5)
        assert r.returncode == 0 and "decision" not in r.stdout, (event, r.stdout, r.stderr)
        if r.stdout:
            json.loads(r.stdout)
    # state.db locked by another writer for the whole run
    lock = sqlite3.connect(hermes_home / "state.db", timeout=0)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
            r = run_hook(event, _payload(event, "c06", t.path), budget=2, timeout=120)
            assert r.returncode == 0 and "decision" not in r.stdout, (event, r.stdout)
            if r.stdout:  # SessionStart still gives its snapshot (memory files need no database)
                assert json.loads(r.stdout)["hookSpecificOutput"]["hookEventName"] == event
            ours = [ln for ln in r.stderr.splitlines() if ln.startswith("hermes-memory:")]
            assert len(ours) <= 1, r.stderr
    finally:
        lock.rollback()
        lock.close()
    log = (hermes_home / "logs" / "hooks.log").read_text()
    assert "hook failed" in log or "nothing injected" in log


def test_c07_slow_provider_recall_gives_up_at_its_budget(hermes_home: Path, earlier_session: Transcript,
                                                         tmp_path: Path) -> None:
    # The provider blocks until this test releases it, after the hook has returned: the hook can only
    # return by giving up on it at its budget (a hook that waited would hang; run_hook's timeout is a
    # safety net only, far above the budget). No wall-clock threshold: a loaded machine cannot break it.
    install_noisy_plugin(hermes_home)
    started, release = tmp_path / "noisy-started", tmp_path / "noisy-release"
    try:
        r = run_hook("UserPromptSubmit", _payload("UserPromptSubmit", "c07", None),
                     env={"NOISY_MODE": "block", "NOISY_STARTED": str(started), "NOISY_RELEASE": str(release)},
                     budget=1.5, timeout=600)
        assert r.returncode == 0, r.stderr
        # the provider never finished (under load the budget may even run out before it is called)
        assert not started.exists() or started.read_text() == "prefetch started"
        if r.stdout:  # the provider's own timeout (the budget left) dropped it first: the rest is injected
            doc = json.loads(r.stdout)
            assert "noisy-recall-marker" not in r.stdout and "quokka-seven" in json.dumps(doc)
        else:  # the recall's budget ran out first: nothing injected, and the log says why
            assert "longer than 1.5 s" in (hermes_home / "logs" / "hooks.log").read_text()
    finally:
        release.touch()


def test_c07_recall_past_its_budget_returns_while_the_slow_call_still_runs() -> None:
    import threading

    from hermes_memory.hooks.runtime import _bounded

    gate, entered = threading.Event(), threading.Event()

    def slow() -> str:
        entered.set()
        gate.wait()
        return "late"

    try:
        done, value, error = _bounded(slow, 0.05)
        assert entered.is_set() and (done, value, error) == (False, None, None)  # gave up, did not wait
    finally:
        gate.set()
    assert _bounded(lambda: "quick", 30) == (True, "quick", None)  # a call that finishes is returned whole


def test_c07_session_end_commits_a_5000_message_transcript_before_it_returns(hermes_home: Path,
                                                                            tmp_path: Path) -> None:
    t = Transcript(tmp_path / "projects" / "p" / "big.jsonl", "big")
    records = []
    for i in range(2500):
        records += [t.user(f"question {i} about marker-{i}"), t.assistant_text(f"answer {i}")]
    t.write(*records)
    r = run_hook("SessionEnd", _payload("SessionEnd", "big", t.path), timeout=600)
    assert r.returncode == 0 and r.stdout == ""
    # as if the hook were SIGKILLed right after returning: everything is already committed
    with SessionDB(hermes_home / "state.db") as db:
        row = present(db.get_session("cc-big"))
        assert row["message_count"] == 5000 and row["ended_at"] is not None
        assert row["end_reason"] == "claude-code:prompt_input_exit"
        assert json.loads(session_search({"query": "marker-2321"}, db))["count"] == 1


def test_c07_fifty_incremental_hook_runs_import_each_turn_once_without_warnings(hermes_home: Path,
                                                                                 tmp_path: Path) -> None:
    from hermes_memory.home import HermesHome
    from hermes_memory.hooks.clients import CLAUDE_CODE as cc
    from hermes_memory.hooks.runtime import run_hook as run_in_process

    t = Transcript(tmp_path / "projects" / "p" / "p99.jsonl", "p99")
    home = HermesHome(hermes_home)
    times: dict[str, list[float]] = {"UserPromptSubmit": [], "Stop": []}
    for i in range(50):
        t.turn(f"zebrafish question {i}", f"answer {i}")
        for event in times:
            start = time.process_time()
            res = run_in_process(cc, event, json.dumps(_payload(event, "p99", t.path)), home, budget=5)
            times[event].append(time.process_time() - start)
            assert res.warning is None, res.warning  # nothing gave up at its budget
        with SessionDB(hermes_home / "state.db") as db:
            assert db.message_count("cc-p99") == 2 * (i + 1)  # each Stop imports the new turn, nothing twice
    for event, ts in times.items():  # a figure for the reader, not a threshold
        print(f"{event}: median CPU {statistics.median(ts):.3f} s over 50 runs")


@pytest.mark.parametrize("variant", ["valid", "empty", "missing"])
def test_c09_pre_compact_never_blocks_and_imports_before_returning(hermes_home: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   variant: str) -> None:
    cfg = tmp_path / "claude-config"
    t = Transcript(cfg / "projects" / "-home-dev-proj" / "c09.jsonl", "c09")
    t.turn("the pre-compaction marker is walrus-42", "ok")
    payload = _payload("PreCompact", "c09", t.path, trigger="manual" if variant == "valid" else "auto")
    if variant == "empty":
        payload["transcript_path"] = ""
    elif variant == "missing":
        del payload["transcript_path"]
    r = run_hook("PreCompact", payload, env={"CLAUDE_CONFIG_DIR": str(cfg)})
    assert r.returncode == 0 and r.stdout == "" and "block" not in r.stdout
    with SessionDB(hermes_home / "state.db") as db:  # found by session_id when the path is empty/missing
        found = json.loads(session_search({"query": "walrus-42"}, db))
    assert found["count"] == 1


def test_pre_compact_without_any_transcript_is_a_no_op(hermes_home: Path, tmp_path: Path) -> None:
    r = run_hook("PreCompact", {"session_id": "nowhere", "hook_event_name": "PreCompact", "trigger": "auto",
                                "transcript_path": ""}, env={"CLAUDE_CONFIG_DIR": str(tmp_path / "none")})
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"session_id": 5}'])
def test_a_malformed_hook_input_exits_0_with_nothing_on_stdout(stdin: str) -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "hermes_memory", "hooks", "run", "UserPromptSubmit"], input=stdin,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == ""


def test_an_unknown_client_event_or_option_still_exits_0(hermes_home: Path) -> None:
    import subprocess
    import sys

    for args in (["hooks", "run", "Stop", "--client", "nope"], ["hooks", "run", "Notification"],
                 ["hooks", "run", "Stop", "--future-option", "x"]):
        r = subprocess.run([sys.executable, "-m", "hermes_memory", *args], input="{}", capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0 and r.stdout == "", (args, r.stderr)


def test_stop_gives_the_latest_exchange_to_the_external_provider(hermes_home: Path, tmp_path: Path) -> None:
    install_noisy_plugin(hermes_home)
    sync = tmp_path / "synced.txt"
    t = Transcript(tmp_path / "projects" / "p" / "sync.jsonl", "sync")
    t.turn("first question", "first answer")
    t.write(t.user("my editor is helix"), t.tool_use("toolu_9", "Read", {"file_path": "x"}),
            t.tool_result("toolu_9", "data"), t.assistant_text("Noted: helix."))
    r = run_hook("Stop", _payload("Stop", "sync", t.path), env={"NOISY_SYNC_FILE": str(sync)})
    assert r.returncode == 0 and r.stdout == ""
    assert sync.read_text() == "cc-sync|my editor is helix|Noted: helix.\n"
    r = run_hook("Stop", _payload("Stop", "sync", t.path), env={"NOISY_SYNC_FILE": str(sync)})
    assert sync.read_text().count("\n") == 1  # nothing new imported, nothing synced again


def test_a_session_resumed_after_its_end_is_live_again(hermes_home: Path, tmp_path: Path) -> None:
    t = Transcript(tmp_path / "projects" / "p" / "again.jsonl", "again")
    t.turn("first visit", "hello")
    assert run_hook("SessionEnd", _payload("SessionEnd", "again", t.path)).returncode == 0
    with SessionDB(hermes_home / "state.db") as db:
        assert present(db.get_session("cc-again"))["ended_at"] is not None
    r = run_hook("SessionStart", _payload("SessionStart", "again", t.path, source="resume"))
    assert r.returncode == 0 and json.loads(r.stdout)
    with SessionDB(hermes_home / "state.db") as db:
        assert present(db.get_session("cc-again"))["ended_at"] is None


def test_recall_of_a_prompt_longer_than_a_title_still_finds_the_earlier_session(hermes_home: Path,
                                                                                earlier_session: Transcript) -> None:
    prompt = ("Before I change anything in the deploy scripts today, remind me: which cluster do we deploy "
              "the zebrafish service to, and did we write down why we picked it?")
    assert len(prompt) > 100
    r = run_hook("UserPromptSubmit", _payload("UserPromptSubmit", "new-session", None, prompt=prompt), budget=20)
    assert r.returncode == 0 and r.stdout, r.stderr
    assert "quokka-seven" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]



def _import_together(home: str, payload: str, event: str, barrier: object) -> None:
    from hermes_memory.home import HermesHome
    from hermes_memory.hooks.runtime import run_hook as run_in_process
    from hermes_memory.sessions.importers import claude_code  # noqa: F401 - loaded before the start line

    data_home = HermesHome.resolve(home)
    barrier.wait()  # type: ignore[attr-defined]
    run_in_process(CLAUDE_CODE, event, payload, data_home)


def test_stop_and_session_end_running_at_once_import_each_message_once(tmp_path: Path, hermes_home: Path) -> None:
    # a SessionEnd may start while the last Stop is still importing (and Claude Code runs the hooks of
    # one event in parallel: two entries of ours with different commands, e.g. two scopes, run at once)
    import multiprocessing

    t = Transcript(tmp_path / "projects" / "p" / "both.jsonl", "both")
    payload = json.dumps(_payload("Stop", "both", t.path))
    ctx = multiprocessing.get_context("spawn")
    for round_ in range(4):
        t.write(*[t.user(f"message {round_}-{i}") for i in range(200)])
        barrier = ctx.Barrier(2)
        procs = [ctx.Process(target=_import_together, args=(str(hermes_home), payload, ev, barrier))
                 for ev in ("Stop", "SessionEnd")]
        for p in procs:
            p.start()
        for p in procs:
            p.join(120)
        assert [p.exitcode for p in procs] == [0, 0]
    with SessionDB(hermes_home / "state.db") as db:
        contents = [m["content"] for m in db.get_messages("cc-both")]
    assert len(contents) == 800 and len(set(contents)) == 800
