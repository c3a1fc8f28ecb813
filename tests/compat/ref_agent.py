"""Helper run by the REFERENCE agent's own python (its venv), never imported by our tests.

Usage: ``<reference python> ref_agent.py COMMAND HOME [JSON-ARG]``; prints one JSON object.
``loop`` reads one JSON command per stdin line and answers one JSON line each (coexistence test).

The reference's code is used unmodified. Only observation is added: every call of its FTS
rebuild/repair paths is counted (``rebuilds``), and its log records at WARNING and above are
collected (``log``) so the tests can assert "no malformed, no index rebuild".
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import sys
import time
from pathlib import Path

HOME = Path(sys.argv[2]).resolve()
os.environ["HERMES_HOME"] = str(HOME)
HOME.mkdir(parents=True, exist_ok=True)

import hermes_state  # noqa: E402  (the reference, after HERMES_HOME is set)

LOG: list[str] = []
REBUILDS: list[str] = []


class _Collect(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        LOG.append(f"{record.levelname} {record.name}: {record.getMessage()}")


logging.getLogger().addHandler(_Collect(level=logging.WARNING))
logging.getLogger().setLevel(logging.WARNING)


def _count(owner: object, name: str) -> None:
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        REBUILDS.append(name)
        return original(*args, **kwargs)

    setattr(owner, name, staticmethod(wrapper) if isinstance(owner.__dict__.get(name), staticmethod) else wrapper)


for _name in ("_rebuild_fts_indexes", "rebuild_fts"):
    if hasattr(hermes_state.SessionDB, _name):
        _count(hermes_state.SessionDB, _name)
if hasattr(hermes_state, "repair_state_db_schema"):
    _count(hermes_state, "repair_state_db_schema")


def _db() -> hermes_state.SessionDB:
    return hermes_state.SessionDB(HOME / "state.db")


def _schema_objects() -> list[list[object]]:
    conn = sqlite3.connect(HOME / "state.db")
    try:
        return [list(r) for r in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")]
    finally:
        conn.close()


def _ids(rows: list[dict]) -> list[int]:
    return sorted(int(r["id"]) for r in rows)


def build(arg: dict) -> dict:
    """A home as the reference writes it: config, memories, sessions with tools, chain, CJK, titles, tokens."""
    if arg.get("config", True):
        from hermes_cli import config as cfg

        cfg.save_config(cfg.DEFAULT_CONFIG, strip_defaults=False)
    from tools.memory_tool import MemoryStore

    store = MemoryStore()
    store.load_from_disk()
    store.add("memory", "User prefers tabs — café ☕ and 日本語 notes")
    store.add("memory", "Deploys go through the staging gateway first")
    store.add("user", "Name: Zoë; timezone Europe/Berlin 🌍")
    db = _db()
    now = time.time()
    db.create_session("ref-s1", "cli", model="anthropic/claude-sonnet-4")
    db.set_session_title("ref-s1", "Kubernetes rollout")
    db.append_message("ref-s1", "user", "How do I roll out the walrus deployment on kubernetes?")
    db.append_message("ref-s1", "assistant", "Let me check the cluster.", tool_calls=[
        {"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "kubectl get pods"}'}}])
    db.append_message("ref-s1", "tool", "walrus-7f9 Running 0 3d", tool_name="terminal", tool_call_id="call_1")
    db.append_message("ref-s1", "assistant", "The walrus deployment is healthy; use kubectl rollout restart.")
    db.update_token_counts("ref-s1", input_tokens=1200, output_tokens=340, model="anthropic/claude-sonnet-4")
    db.end_session("ref-s1", "user_exit")
    # a compression chain: parent ended by compression, continuation child
    db.create_session("ref-p", "cli")
    db.append_message("ref-p", "user", "Plan the penguin migration to postgres")
    db.append_message("ref-p", "assistant", "We will migrate penguin data in three phases.")
    db.end_session("ref-p", "compression")
    db.create_session("ref-c", "cli", parent_session_id="ref-p")
    db.append_message("ref-c", "user", "Continue the penguin migration, phase two")
    db.append_message("ref-c", "assistant", "Phase two copies the penguin tables.")
    # CJK
    db.create_session("ref-cjk", "telegram")
    db.set_session_title("ref-cjk", "记忆断裂 修复")
    db.append_message("ref-cjk", "user", "记忆断裂的问题已经修复了吗？")
    db.append_message("ref-cjk", "assistant", "是的，记忆断裂已经修复，东京で会議があります")
    # old sessions to prune later
    for n in range(3):
        sid = f"ref-old{n}"
        db.create_session(sid, "cron")
        db.append_message(sid, "user", f"nightly report number {n} about the otter pipeline")
        db.end_session(sid, "cron_complete")
    db._conn.execute("UPDATE sessions SET started_at = ? WHERE id LIKE 'ref-old%'", (now - 200 * 86400,))
    db._conn.commit()
    db.close()
    return {"ok": True, "version": hermes_state.SCHEMA_VERSION}


QUERIES = ["walrus", '"walrus deployment"', "penguin", "kubectl", "terminal", "记忆断裂", "会議", "otter pipeline",
           "rollout", "migration"]


def search(arg: dict) -> dict:
    db = _db()
    try:
        out = {q: _ids(db.search_messages(q, limit=200)) for q in arg.get("queries", QUERIES)}
    finally:
        db.close()
    return {"results": out}


def ops(arg: dict) -> dict:
    """Every SessionDB operation the issue lists, on the home as it is now. Raises on any failure."""
    db = _db()
    res: dict[str, object] = {}
    try:
        db.create_session("ref-new", "cli")
        mid = db.append_message("ref-new", "user", "the narwhal appears after our commands")
        db.append_message("ref-new", "user", "東京で新しい会議")
        res["append_id"] = mid
        res["search_en"] = _ids(db.search_messages("narwhal"))
        res["search_phrase"] = _ids(db.search_messages('"narwhal appears"'))
        res["search_cjk"] = _ids(db.search_messages("新しい会議"))
        res["search_old"] = _ids(db.search_messages(arg.get("old_word", "walrus")))
        db.replace_messages("ref-new", [{"role": "user", "content": "replaced beluga text"}])
        res["after_replace"] = {"beluga": _ids(db.search_messages("beluga")), "narwhal": _ids(db.search_messages("narwhal"))}
        db.clear_messages("ref-new")
        res["after_clear"] = _ids(db.search_messages("beluga"))
        res["delete"] = db.delete_session(arg.get("delete", "ref-s1"))
        res["after_delete"] = _ids(db.search_messages(arg.get("deleted_word", "kubectl")))
        # one more ended session old enough to prune, so prune_sessions really deletes
        db.create_session("ref-late-old", "cron")
        db.append_message("ref-late-old", "user", "stale marmot notes")
        db.end_session("ref-late-old", "cron_complete")
        db._conn.execute("UPDATE sessions SET started_at = ? WHERE id = 'ref-late-old'", (time.time() - 400 * 86400,))
        db._conn.commit()
        res["pruned"] = db.prune_sessions(older_than_days=90)
        res["after_prune"] = _ids(db.search_messages("marmot"))
        res["session_ids"] = sorted(r[0] for r in db._conn.execute("SELECT id FROM sessions"))
    finally:
        db.close()
    return res


def check(arg: dict) -> dict:
    """Integrity of the file and of EVERY FTS5 table in it (the reference's and ours)."""
    db = _db()
    db.close()
    conn = sqlite3.connect(HOME / "state.db")
    try:
        integrity = [r[0] for r in conn.execute("PRAGMA integrity_check")]
        fts = {}
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND sql LIKE '%USING fts5%'"):
            try:
                conn.execute(f"INSERT INTO {name}({name}, rank) VALUES('integrity-check', 1)")
                fts[name] = "ok"
            except sqlite3.DatabaseError as exc:
                fts[name] = str(exc)
        version = conn.execute("SELECT version FROM schema_version").fetchall()
    finally:
        conn.close()
    return {"integrity": integrity, "fts": fts, "version": version}


def objects(arg: dict) -> dict:
    return {"objects": _schema_objects()}


def loop(arg: dict) -> dict:
    """Stay open; run one command per stdin line: write / search / delete / count."""
    db = _db()
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        try:
            if op == "write":
                db.create_session(cmd["sid"], "cli")
                out = {"id": db.append_message(cmd["sid"], "user", cmd["text"])}
            elif op == "search":
                out = {"ids": _ids(db.search_messages(cmd["query"], limit=500))}
            elif op == "delete":
                out = {"deleted": db.delete_session(cmd["sid"])}
            elif op == "quit":
                break
            else:
                out = {"error": f"unknown op {op}"}
        except Exception as exc:  # report, keep going: the test counts failures
            out = {"error": f"{type(exc).__name__}: {exc}"}
        out.update(rebuilds=list(REBUILDS), log=list(LOG))
        print(json.dumps(out), flush=True)
    db.close()
    return {"ok": True}


_WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
          "quebec romeo sierra tango uniform victor whiskey xray yankee zulu deploy gateway cluster walrus "
          "penguin otter migration kubernetes postgres rollout budget meeting schedule review").split()


def bulk(arg: dict) -> dict:
    """``sessions`` x ``per`` messages written through the reference's own connection in one
    transaction (its triggers index them), deterministic text; for benchmarks."""
    import random

    rng = random.Random(arg.get("seed", 7))
    db = _db()
    t0 = time.perf_counter()
    conn = db._conn
    conn.execute("BEGIN IMMEDIATE")
    now = time.time() - 86400 * 30
    for s in range(arg["sessions"]):
        sid = f"bulk-{s:06d}"
        conn.execute("INSERT INTO sessions (id, source, started_at, ended_at, end_reason, message_count) "
                     "VALUES (?, 'cli', ?, ?, 'user_exit', ?)", (sid, now + s, now + s + 60, arg["per"]))
        rows = []
        for m in range(arg["per"]):
            role = ("user", "assistant", "tool")[m % 3]
            text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 40)))
            if m % 50 == 7:
                text += " 记忆断裂的问题已经修复"
            rows.append((sid, role, text, "terminal" if role == "tool" else None, now + s + m * 0.01))
        conn.executemany("INSERT INTO messages (session_id, role, content, tool_name, timestamp) VALUES (?,?,?,?,?)",
                         rows)
    conn.execute("COMMIT")
    seconds = time.perf_counter() - t0
    n = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    db.close()
    return {"messages": n, "seconds": round(seconds, 3)}


def append(arg: dict) -> dict:
    """``n`` messages appended with the reference's own ``append_message`` (one transaction each)."""
    db = _db()
    sid = arg.get("sid", f"append-{time.time_ns()}")
    db.create_session(sid, "cli")
    t0 = time.perf_counter()
    for i in range(arg["n"]):
        db.append_message(sid, "user", f"appended message {i} about the {_WORDS[i % len(_WORDS)]} rollout")
    seconds = time.perf_counter() - t0
    db.close()
    return {"sid": sid, "seconds": round(seconds, 3)}


def rebuild_messages(arg: dict) -> dict:
    """Rebuild the ``messages`` table the way a schema migration does (new table, copy, drop,
    rename): SQLite drops every trigger on the old table, ours included. Then the reference opens
    the file again (re-creating its own triggers) and optionally deletes sessions."""
    conn = sqlite3.connect(HOME / "state.db", isolation_level=None)
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'messages'").fetchone()[0]
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(re.sub(r'^CREATE TABLE\s+"?messages"?', "CREATE TABLE messages_rebuilt", sql, count=1))
    conn.execute("INSERT INTO messages_rebuilt SELECT * FROM messages")
    conn.execute("DROP TABLE messages")
    conn.execute("ALTER TABLE messages_rebuilt RENAME TO messages")
    conn.execute("COMMIT")
    left = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")]
    conn.close()
    db = _db()
    deleted = [db.delete_session(sid) for sid in arg.get("delete", [])]
    db.close()
    return {"triggers_left_after_rebuild": left, "deleted": deleted}


def escaped(arg: dict) -> dict:
    """A turn of the agent calling its own memory tool, as its conversation loop stores it: the
    tool call (``arguments`` as the provider sent them, raw UTF-8, so only the reference's
    ``json.dumps(tool_calls)`` escapes them), the tool's JSON result, a second call whose
    arguments the loop re-serialised (``json.dumps(args)``: escaped twice) and multi-part content
    (stored ``"\\x00json:" + json.dumps(content)``). Returns the message ids by kind."""
    from tools.memory_tool import MemoryStore, memory_tool

    store = MemoryStore()
    store.load_from_disk()
    sid = arg.get("sid", "ref-esc")
    db = _db()
    db.create_session(sid, "cli")
    ids = {"user": db.append_message(sid, "user", "Please remember my coffee order.")}
    args = {"action": "add", "target": "memory", "content": arg["memory"]}
    ids["call"] = db.append_message(sid, "assistant", "Saving that.", tool_calls=[
        {"id": "call_m1", "type": "function",
         "function": {"name": "memory", "arguments": json.dumps(args, ensure_ascii=False)}}])
    result = memory_tool(store=store, **args)
    ids["result"] = db.append_message(sid, "tool", result, tool_name="memory", tool_call_id="call_m1")
    again = {"action": "add", "target": "user", "content": arg["twice"]}
    ids["call_twice"] = db.append_message(sid, "assistant", None, tool_calls=[
        {"id": "call_m2", "type": "function", "function": {"name": "memory", "arguments": json.dumps(again)}}])
    ids["parts"] = db.append_message(sid, "user", [{"type": "text", "text": arg["parts"]}])
    db.close()
    conn = sqlite3.connect(HOME / "state.db")
    stored = {k: conn.execute("SELECT content, tool_calls FROM messages WHERE id = ?", (v,)).fetchone()
              for k, v in ids.items()}
    conn.close()
    return {"ids": ids, "stored": stored, "result": result}


COMMANDS = {"bulk": bulk, "append": append, "rebuild_messages": rebuild_messages, "build": build, "search": search, "ops": ops, "check": check, "objects": objects, "loop": loop, "escaped": escaped}

if __name__ == "__main__":
    arg = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    result = COMMANDS[sys.argv[1]](arg)
    result.update(rebuilds=REBUILDS, log=LOG)
    print(json.dumps(result, ensure_ascii=False))
