"""Storage benchmark: SQLite (``SessionDB``/``MemoryStore``) beside PostgreSQL (``PgSessionDB``/
``PgMemoryStore``) in one run, on the same machine and the same synthetic corpus.

Prints one JSON object. Run: ``python bench/storage.py [--sizes 100000,1000000] [--pg-url URL]``.

* append: messages/second with 1 and 4 concurrent writer *processes* (each its own store object
  and session, committing every message with ``append_message``), total over the wall time.
* search: for each size (grown in place with ``append_messages``, 50 messages per session, in
  batched transactions on both engines),
  p50/p95 latency in ms of two-word keyword queries and natural-language questions through
  ``search_messages`` (limit 20), ``--queries`` each after a warm-up, whole ``session_search``
  discovery calls (a quarter as many questions), and the load rate.
* memory: median/p95 latency in ms of ``add`` then ``remove`` of one entry (a write each), the
  store holding ten seed entries, ``--memory-rounds`` rounds.

PostgreSQL: ``--pg-url`` (an empty database), else a throwaway local server (tests/pgserver.py)
with durability switched back on (``fsync``, ``synchronous_commit``, ``full_page_writes``), so both
engines make every commit durable: SQLite runs with ``synchronous=full`` (the default). The corpus
is bench/sessions.py's (Zipf vocabulary, 2 % CJK, fixed seed).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from bench.sessions import Corpus, grow, latency  # noqa: E402

from hermes_memory.memory import MemoryStore  # noqa: E402
from hermes_memory.sessions.db import SessionDB  # noqa: E402


def open_db(kind: str, where: str) -> Any:
    if kind == "sqlite":
        return SessionDB(where)
    from hermes_memory.sessions.pg import PgSessionDB

    return PgSessionDB(where)


def _writer(kind: str, where: str, texts: list[str], start: Any, out: Any) -> None:
    db = open_db(kind, where)
    sid = db.create_session(source="bench-append")
    start.wait()
    t0 = time.perf_counter()
    for t in texts:
        db.append_message(sid, "user", t)
    out.put((t0, time.perf_counter()))
    db.close()


def append_throughput(kind: str, where: str, corpus: Corpus, writers: int, per_writer: int) -> dict[str, float]:
    ctx = mp.get_context("fork")
    start = ctx.Event()
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(kind, where, [corpus.message() for _ in range(per_writer)], start, out))
             for _ in range(writers)]
    for p in procs:
        p.start()
    time.sleep(1.0)  # every writer has opened its store
    start.set()
    spans = [out.get(timeout=900) for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode:
            raise RuntimeError(f"{kind} writer failed with exit code {p.exitcode}")
    wall = max(e for _, e in spans) - min(s for s, _ in spans)
    return {"writers": writers, "messages": writers * per_writer, "msgs_per_s": round(writers * per_writer / wall, 1)}


def memory_latency(store: Any, rounds: int) -> dict[str, float]:
    for i in range(10):
        store.add("memory", f"seed fact number {i}: the deploy script lives in tools/deploy-{i}.sh")
    add_ms, remove_ms = [], []
    for i in range(rounds):
        entry = f"round {i}: the staging database moved to db-{i}.internal on port {5400 + i % 50}"
        t0 = time.perf_counter()
        r = store.add("memory", entry)
        add_ms.append((time.perf_counter() - t0) * 1000)
        assert r.get("success"), r
        t0 = time.perf_counter()
        r = store.remove("memory", entry)
        remove_ms.append((time.perf_counter() - t0) * 1000)
        assert r.get("success"), r

    def stats(xs: list[float]) -> dict[str, float]:
        xs = sorted(xs)
        return {"p50_ms": round(statistics.median(xs), 3), "p95_ms": round(xs[int(0.95 * (len(xs) - 1))], 3)}

    return {"add": stats(add_ms), "remove": stats(remove_ms), "rounds": rounds}


def pg_server() -> tuple[Any, str]:
    from tests.pgserver import PostgresServer

    server = PostgresServer().start()
    for setting in ("fsync = on", "synchronous_commit = on", "full_page_writes = on"):
        server.psql(f"ALTER SYSTEM SET {setting}")
    server.psql("SELECT pg_reload_conf()")
    return server, server.url


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000", help="comma-separated message counts (e.g. 100000,1000000)")
    ap.add_argument("--queries", type=int, default=200, help="queries per kind and size")
    ap.add_argument("--append-per-writer", type=int, default=500, help="messages each writer appends")
    ap.add_argument("--memory-rounds", type=int, default=200)
    ap.add_argument("--pg-url", default=None, help="an empty PostgreSQL database (default: a throwaway local server)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--parts", default="append,search,memory", help="which measurements to run")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    server = None
    if args.pg_url:
        base_url = args.pg_url
    else:
        server, base_url = pg_server()
    out: dict[str, Any] = {"bench": "storage", "python": sys.version.split()[0], "sizes": sizes}
    try:
        with tempfile.TemporaryDirectory() as tmpname:
            tmp = Path(tmpname)
            urls = {"append": base_url, "search": base_url, "memory": base_url}
            if server is not None:  # one database per part, so each starts empty
                urls = {part: server.create_database(f"bench_{part}") for part in urls}
                import psycopg

                with psycopg.connect(server.url, autocommit=True) as conn:
                    out["postgres"] = conn.execute("SHOW server_version").fetchone()[0]
            import sqlite3

            out["sqlite"] = sqlite3.sqlite_version
            corpus = Corpus(args.seed, 0.02)
            out["append"] = {} if "append" not in parts else {kind: [append_throughput(kind, where, corpus, w, args.append_per_writer) for w in (1, 4)]
                             for kind, where in (("sqlite", str(tmp / "append.db")), ("postgres", urls["append"]))}
            print(json.dumps({"append": out["append"]}), file=sys.stderr, flush=True)
            qrng = Corpus(args.seed + 1, 0.0)
            qrng.vocab = corpus.vocab
            two = [qrng.two_word() for _ in range(args.queries)]
            nl = [qrng.question() for _ in range(args.queries)]
            search: dict[str, list[dict[str, Any]]] = {"sqlite": [], "postgres": []}
            for kind, where in (("sqlite", str(tmp / "search.db")), ("postgres", urls["search"])) if "search" in parts else ():
                db = open_db(kind, where)
                grow_corpus = Corpus(args.seed + 2, 0.02)
                grow_corpus.vocab = corpus.vocab
                have = 0
                texts = (t for _ in iter(int, 1) for t in grow_corpus.batch(5000))  # endless stream
                for size in sizes:
                    # the corpus is loaded in batched transactions (SessionDB.batch: one commit per
                    # BATCH_WRITES writes) on both engines: what is timed is the search, and one
                    # durable commit per 50-message session made a 1M load take hours here
                    with db.batch():
                        _, secs = grow(db, texts, have, size)
                    row = {"messages": size, "load_msgs_per_s": round((size - have) / secs, 1) if secs else None,
                           "two_word": latency(db, two), "natural_language": latency(db, nl),
                           "session_search_tool_natural_language": latency(db, nl[: max(20, len(nl) // 4)], tool=True)}
                    have = size
                    search[kind].append(row)
                    print(json.dumps({kind: row}), file=sys.stderr, flush=True)
                db.close()
            out["search"] = search
            from hermes_memory.memory.pg import PgMemoryStore

            out["memory"] = {} if "memory" not in parts else {
                "sqlite": memory_latency(MemoryStore(tmp / "memories", 100_000, 100_000), args.memory_rounds),
                "postgres": memory_latency(PgMemoryStore(urls["memory"], 100_000, 100_000), args.memory_rounds)}
    finally:
        if server is not None:
            server.stop()
    ratios: dict[str, float] = {}
    if out["append"]:
        sq, pg = out["append"]["sqlite"], out["append"]["postgres"]
        ratios["append_1_writer"] = round(pg[0]["msgs_per_s"] / sq[0]["msgs_per_s"], 2)
        ratios["append_4_writers"] = round(pg[1]["msgs_per_s"] / sq[1]["msgs_per_s"], 2)
    if out["search"]["sqlite"]:
        last = {k: v[-1] for k, v in out["search"].items()}
        for kind in ("two_word", "natural_language"):
            ratios[f"search_{kind}_p95_at_largest"] = round(
                last["postgres"][kind]["p95_ms"] / last["sqlite"][kind]["p95_ms"], 2)
    if out["memory"]:
        mem = out["memory"]
        ratios["memory_add_p50"] = round(mem["postgres"]["add"]["p50_ms"] / mem["sqlite"]["add"]["p50_ms"], 2)
    out["ratios_postgres_over_sqlite"] = ratios
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
