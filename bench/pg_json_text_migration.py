"""Opening a big PostgreSQL session database at schema 10 with this checkout: how long the upgrade
takes and what other sessions can do meanwhile (migration 11 and later recompute the search
values of every row whose content or tool calls hold a backslash).

One throwaway server (tests/pgserver.py; ``fsync`` off), one database written at schema 10
(tests/sessions/pg_old_schema.py's cut of the migrations) with ``--messages`` rows in sessions of
50, bulk-loaded (:func:`_load`: each row's previous-turn vector as the trigger computes it): a
cycle of six rows, user text, assistant with a tool call, its tool result, assistant text, user text, assistant with a tool call, i.e. a third of the rows carry tool calls written as
the reference writes them (``json.dumps`` of the list, arguments escaped twice, ``caf\\u00e9``);
half the tool results are JSON output with escapes (``\\n``, ``\\"``); every fifth user turn is
list content behind the ``\\x1ejson:`` prefix with an escaped newline. Rows hold 150-400
characters of words of bench/sessions.py's synthetic vocabulary (3,000 words; seed ``--seed``).

Then this checkout opens the database (``PgSessionDB(url)``: the migrations and at most
``decoded_schema.OPEN_BUDGET_S`` of the recomputation after them) and the wall time of that open is
taken (``upgrade_s``), then the time until the rest, done in the background of the same process, ends
(``recomputed_s``), while probes run,
each on its own connection opened at schema 10 before the upgrade (as another host's agent still
running the previous release would be):

* ``append``: ``append_message`` to an existing session, one call after another;
* ``update_old_row``: ``update_message_content`` of a random old row holding a backslash, with
  its own content (an edit or a compaction of history: a write to a row the upgrade rewrites);
* ``search``: ``search_messages`` of a two-word query;
* ``open``: one second after the upgrade starts, a second ``PgSessionDB(url)`` of this checkout
  (another process starting): how long until it can serve.

The probes stop when the recomputation ends. Per probe: calls, the p50 / max wall ms of one
call (the longest a writer waited) and the calls that failed (a write that waited out its lock
timeout). Then every stored value of the rows that existed is compared with what was read before
the upgrade (``search_vector`` excepted), and ``messages``' size (table, TOAST and indexes) is read.

    .venv/bin/python bench/pg_json_text_migration.py --messages 200000

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from bench.sessions import make_vocab  # noqa: E402

from hermes_memory.sessions.codec import JSON_CONTENT_PREFIX  # noqa: E402

PER_SESSION = 50


def _text(rng: random.Random, words: list[str]) -> str:
    out: list[str] = []
    size = rng.randint(150, 400)
    while sum(len(w) + 1 for w in out) < size:
        out.append(rng.choice(words))
    return " ".join(out)


def _rows(n: int, seed: int) -> list[tuple[Any, ...]]:
    """``n`` message rows ``(session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp)``."""
    rng = random.Random(seed)
    words = make_vocab(rng, 3000)
    rows: list[tuple[Any, ...]] = []
    for i in range(n):
        sid, k = f"s{i // PER_SESSION:06d}", i % 6
        ts = 1_700_000_000.0 + i
        text = _text(rng, words)
        if k in (1, 5):  # assistant with a tool call, written as the reference writes it
            args = json.dumps({"command": f"grep -n 'caf\u00e9 {text[:60]}' notes.md", "note": text[60:]})
            calls = json.dumps([{"id": f"call_{i}", "type": "function",
                                 "function": {"name": "terminal", "arguments": args}}])
            rows.append((sid, "assistant", "", None, calls, None, ts))
        elif k == 2:  # its result: JSON output with escapes every other time
            content = json.dumps({"output": text.replace(" ", "\n", 3), "exit": 0}) if i % 12 == 2 else text
            rows.append((sid, "tool", content, f"call_{i - 1}", None, "terminal", ts))
        elif k == 4 and i % 5 == 0:  # list content behind our prefix
            rows.append((sid, "user", JSON_CONTENT_PREFIX + json.dumps([{"type": "text", "text": text.replace(" ", "\n", 1)}]),
                         None, None, None, ts))
        else:
            rows.append((sid, "user" if k in (0, 4) else "assistant", text, None, None, None, ts))
    return rows


def _load(url: str, n: int, seed: int) -> dict[str, Any]:
    """Write the schema-10 database and load ``n`` rows in bulk, as bench/pg_search_ab.py's
    ``load_natural`` does: triggers off, the messages' indexes other than the primary key dropped,
    rows inserted by one statement with ``hm_context`` set to what trigger ``hm_messages_context_bi``
    computes (checked against ``hm_context_of`` on 500 random rows), indexes built again, ``VACUUM
    ANALYZE``. Appending them one by one costs about 5 ms a row on 2 cores (108 s for 20,000)."""
    import psycopg
    from tests.sessions.pg_old_schema import write_at_schema

    from hermes_memory.sessions.hmcontext import NEIGHBOUR_CHARS
    from hermes_memory.sessions.pg.search_schema import NORMALISE, TS_CONFIG

    write_at_schema(url, 10, lambda db: None)
    rows = _rows(n, seed)
    t0 = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute("SET maintenance_work_mem = '256MB'")
        indexes = conn.execute("SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index "
                               "WHERE indrelid = 'messages'::regclass AND NOT indisprimary").fetchall()
        for name, _ in indexes:
            conn.execute(f"DROP INDEX {name}")
        conn.execute("CREATE UNLOGGED TABLE hm_bench_stage (id bigint, session_id text, role text, content text, "
                     "tool_call_id text, tool_calls text, tool_name text, ts double precision)")
        with conn.cursor() as cur:
            with cur.copy("COPY sessions (id, source, started_at, message_count) FROM STDIN") as cp:
                for s in range(0, n, PER_SESSION):
                    cp.write_row((f"s{s // PER_SESSION:06d}", "cli", 1_700_000_000.0 + s, min(PER_SESSION, n - s)))
            with cur.copy("COPY hm_bench_stage FROM STDIN") as cp:
                for i, r in enumerate(rows):
                    cp.write_row((i + 1, *r))
        vec = (f"setweight(to_tsvector('{TS_CONFIG}'::regconfig, regexp_replace(left(t.prev, {NEIGHBOUR_CHARS}), "
               f"{NORMALISE}, ' ', 'g')), 'D')")
        conn.execute(
            "INSERT INTO messages (id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, hm_context) "
            f"SELECT s.id, s.session_id, s.role, s.content, s.tool_call_id, s.tool_calls, s.tool_name, s.ts, "
            f"CASE WHEN t.prev IS NOT NULL THEN {vec} END FROM hm_bench_stage s LEFT JOIN ("
            " SELECT id, lag(content) OVER (PARTITION BY session_id ORDER BY ts, id) AS prev FROM hm_bench_stage"
            " WHERE role IN ('user', 'assistant') AND length(content) > 0) t USING (id)")
        conn.execute("DROP TABLE hm_bench_stage")
        conn.execute("SELECT setval(pg_get_serial_sequence('messages', 'id'), (SELECT max(id) FROM messages))")
        for _, definition in indexes:
            conn.execute(definition)
        conn.execute("RESET session_replication_role")
        conn.execute("VACUUM ANALYZE messages")
        conn.execute("VACUUM ANALYZE sessions")
        bad = conn.execute("SELECT count(*) FROM (SELECT * FROM messages ORDER BY hashint8(id) LIMIT 500) m "
                           "WHERE m.hm_context IS DISTINCT FROM CASE WHEN m.role IN ('user', 'assistant') AND length(m.content) > 0 "
                           "THEN hm_context_of(m.session_id, m.timestamp, m.id) END").fetchone()[0]
        if bad:
            raise RuntimeError(f"{bad} of 500 bulk-loaded rows have another hm_context than the trigger gives")
        escaped = conn.execute("SELECT count(*) FROM messages WHERE strpos(content, chr(92)) > 0 "
                               "OR strpos(tool_calls, chr(92)) > 0").fetchone()[0]
    return {"messages": n, "with_backslash": escaped, "load_s": round(time.perf_counter() - t0, 1)}


class Probe(threading.Thread):
    """Calls ``call()`` until told to stop; keeps each call's wall ms."""

    def __init__(self, name: str, call: Any) -> None:
        super().__init__(name=name, daemon=True)
        self.call, self.ms, self.errors = call, [], []  # type: ignore[var-annotated]
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            t0 = time.perf_counter()
            try:
                self.call()
            except Exception as exc:  # noqa: BLE001 - a probe reports what failed, it never stops the run
                self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
            self.ms.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.02)

    def report(self) -> dict[str, Any]:
        return {"calls": len(self.ms), "p50_ms": round(statistics.median(self.ms), 1) if self.ms else None,
                "max_ms": round(max(self.ms), 1) if self.ms else None, "failed": len(self.errors),
                "errors": self.errors[:2]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    import psycopg
    from tests.pgserver import PostgresServer
    from tests.sessions.pg_old_schema import at_schema, stored_rows

    from hermes_memory.sessions.pg import PgSessionDB

    server = PostgresServer().start()
    try:
        url = server.create_database()
        out: dict[str, Any] = {"load": _load(url, args.messages, args.seed)}
        before = stored_rows(url, "messages", ("search_vector",))
        rng = random.Random(args.seed + 1)
        with psycopg.connect(url, autocommit=True) as conn:
            old_ids = [r[0] for r in conn.execute("SELECT id FROM messages WHERE strpos(content, chr(92)) > 0").fetchall()]
            out["size_before_mb"] = round(conn.execute("SELECT pg_total_relation_size('messages')").fetchone()[0] / 2**20)
        with at_schema(10):  # the other sessions: open before the upgrade, as the previous release
            others = [PgSessionDB(url, pool_size=1) for _ in range(3)]
        appender, editor, searcher = others
        n_new = [0]

        def append() -> None:
            n_new[0] += 1
            appender.append_message("s000000", "user", f"probe append {n_new[0]}", timestamp=1_800_000_000.0 + n_new[0])

        def edit() -> None:
            mid = rng.choice(old_ids)
            msg = editor.get_message(mid)
            editor.update_message_content(mid, msg["content"] if msg else "")

        probes = [Probe("append", append), Probe("update_old_row", edit),
                  Probe("search", lambda: searcher.search_messages("walrus garden", limit=10))]
        opened: dict[str, Any] = {}

        def second_open() -> None:
            time.sleep(1.0)
            t0 = time.perf_counter()
            PgSessionDB(url, pool_size=1).close()
            opened["open_ms"] = round((time.perf_counter() - t0) * 1000, 1)

        for p in probes:
            p.start()
        time.sleep(2.0)
        for p in probes:  # what a call costs before the upgrade starts
            out.setdefault("idle_p50_ms", {})[p.name] = round(statistics.median(p.ms), 1) if p.ms else None
            p.ms.clear()
        opener = threading.Thread(target=second_open, daemon=True)
        opener.start()
        t0 = time.perf_counter()
        db = PgSessionDB(url)
        out["upgrade_s"] = round(time.perf_counter() - t0, 2)
        db.wait_for_recomputation()  # the rest of the recomputation, in the background of this process
        out["recomputed_s"] = round(time.perf_counter() - t0, 2)
        out["migration"] = db.migration
        for p in probes:
            p.stop.set()
            p.join()
        opener.join()
        out["probes"] = {p.name: p.report() for p in probes}
        out["probes"]["open"] = opened
        db.close()
        for o in others:
            o.close()
        edited = [r for r in stored_rows(url, "messages", ("search_vector",)) if r["id"] <= before[-1]["id"]]
        out["stored_values_unchanged"] = edited == before
        with psycopg.connect(url, autocommit=True) as conn:
            out["size_after_mb"] = round(conn.execute("SELECT pg_total_relation_size('messages')").fetchone()[0] / 2**20)
        print(json.dumps(out, indent=2))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
