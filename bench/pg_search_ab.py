"""PostgreSQL search, two versions side by side on one corpus and one server, interleaved.

One throwaway server (tests/pgserver.py; ``fsync`` off: what is timed is reads), one database
loaded with ``bench/storage.py``'s corpus (bench/sessions.py's Zipf vocabulary, 2 % CJK, 50
messages a session, user and assistant turns, seed 7) by the old version in batched transactions,
then copied byte for byte (``CREATE DATABASE ... TEMPLATE``: the same rows, ids, statistics and GIN
pending lists). One worker process per version opens its copy (``--base-src``: the old tree's
``src``; the new one is this checkout, and opening its copy applies its migrations), warms with
the first 10 queries of each kind, then gets every query in turn, alternating which version goes
first. Kinds: ``bench/storage.py``'s two-word queries and questions through ``search_messages``
(limit 20), the questions through whole ``session_search`` calls (roles user and assistant,
hidden sources left out, as the tool searches by default) and with ``role_filter`` ``user``.
Each worker times a call (wall and its thread's CPU, in ms) and returns what it found (result ids;
for ``session_search`` each result's session and hit ids), so the run also says for how many
queries the two versions answered the same.

    python bench/pg_search_ab.py --size 100000 --base-src /tmp/main/src

Prints one JSON object: per kind and version p50/p95 of wall and CPU ms, the number of queries
with identical answers, each copy's GIN pending pages after the load and at the end, the load
average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("two_word", "question", "tool", "tool_role_user")


def worker(url: str) -> None:
    """Answer ``[kind, query]`` lines on stdin with ``[cpu_ms, wall_ms, found]`` lines."""
    from hermes_memory.sessions.pg import PgSessionDB
    from hermes_memory.sessions.search import session_search

    db: Any = PgSessionDB(url)
    print("ready", flush=True)
    for line in sys.stdin:
        kind, q = json.loads(line)
        t0, c0 = time.perf_counter(), time.thread_time()
        if kind.startswith("tool"):
            args = {"query": q, "role_filter": "user"} if kind == "tool_role_user" else {"query": q}
            out = json.loads(session_search(args, db))
            found: Any = [[r["session_id"], [h["message_id"] for h in r["hits"]]] for r in out.get("results", [])]
        else:
            found = [r["id"] for r in db.search_messages(q, limit=20)]
        cpu, wall = (time.thread_time() - c0) * 1000, (time.perf_counter() - t0) * 1000
        print(json.dumps([cpu, wall, found]), flush=True)


def load(url: str, size: int, seed: int) -> dict[str, float]:
    """Load ``bench/storage.py``'s search corpus (``size`` messages) into ``url``."""
    sys.path.insert(0, str(ROOT))
    from bench.sessions import Corpus, grow

    from hermes_memory.sessions.pg import PgSessionDB

    vocab = Corpus(seed, 0.02).vocab
    stream = Corpus(seed + 2, 0.02)
    stream.vocab = vocab
    texts = (t for _ in iter(int, 1) for t in stream.batch(5000))
    db: Any = PgSessionDB(url)
    t0 = time.perf_counter()
    with db.batch():
        grow(db, texts, 0, size)
    db.close()
    return {"messages": size, "load_s": round(time.perf_counter() - t0, 1)}


def queries(seed: int, n: int) -> dict[str, list[str]]:
    """``bench/storage.py``'s queries: ``n`` two-word queries and ``n`` questions."""
    sys.path.insert(0, str(ROOT))
    from bench.sessions import Corpus

    vocab = Corpus(seed, 0.02).vocab
    q = Corpus(seed + 1, 0.0)
    q.vocab = vocab
    two = [q.two_word() for _ in range(n)]
    nl = [q.question() for _ in range(n)]
    return {"two_word": two, "question": nl, "tool": nl, "tool_role_user": nl}


def pending_pages(url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        rows = conn.execute("SELECT c.relname, (pgstatginindex(c.oid)).pending_pages FROM pg_class c "
                            "JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'gin' AND c.relname LIKE 'hm_messages%' "
                            "ORDER BY 1").fetchall()
    return {r[0]: int(r[1]) for r in rows}


def _spawn(src: str, url: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=src)
    proc = subprocess.Popen([sys.executable, __file__, "--worker", url], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env, cwd=str(ROOT))
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _stats(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"p50": round(statistics.median(xs), 1), "p95": round(xs[int(0.95 * (len(xs) - 1))], 1),
            "max": round(xs[-1], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000, help="messages in the corpus")
    ap.add_argument("--base-src", help="the old tree's src folder")
    ap.add_argument("--queries", type=int, default=60, help="queries of each kind")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--load", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker)
        return
    if args.load:
        print(json.dumps(load(args.load[0], int(args.load[1]), args.seed)))
        return
    if not args.base_src:
        ap.error("--base-src is required")
    sys.path.insert(0, str(ROOT))
    from tests.pgserver import PostgresServer

    server = PostgresServer().start()
    out: dict[str, Any] = {"bench": "pg_search_ab", "size": args.size, "loadavg_start": os.getloadavg()}
    procs: dict[str, subprocess.Popen[str]] = {}
    try:
        base_url = server.create_database("ab_base")
        done = subprocess.run([sys.executable, __file__, "--load", base_url, str(args.size), "--seed", str(args.seed)],
                              env=dict(os.environ, PYTHONPATH=args.base_src), cwd=str(ROOT), capture_output=True,
                              text=True, check=True)
        out["load"] = json.loads(done.stdout.strip().splitlines()[-1])
        server.psql('CREATE DATABASE ab_branch TEMPLATE ab_base')
        branch_url = base_url.rsplit("/", 1)[0] + "/ab_branch"
        out["pending_pages_after_load"] = pending_pages(base_url)
        procs = {"base": _spawn(args.base_src, base_url), "branch": _spawn(str(ROOT / "src"), branch_url)}
        out["pending_pages_branch_after_open"] = pending_pages(branch_url)
        qs = queries(args.seed, args.queries)

        def ask(name: str, kind: str, q: str) -> list[Any]:
            p = procs[name]
            assert p.stdin is not None and p.stdout is not None
            p.stdin.write(json.dumps([kind, q]) + "\n")
            p.stdin.flush()
            return list(json.loads(p.stdout.readline()))

        for kind in KINDS:  # warm-up: stems, term counts, connections
            for q in qs[kind][:10]:
                for name in procs:
                    ask(name, kind, q)
        wall: dict[str, dict[str, list[float]]] = {k: {n: [] for n in procs} for k in KINDS}
        cpu: dict[str, dict[str, list[float]]] = {k: {n: [] for n in procs} for k in KINDS}
        same = dict.fromkeys(KINDS, 0)
        turn = 0
        for kind in KINDS:
            for q in qs[kind]:
                order = ["base", "branch"] if turn % 2 == 0 else ["branch", "base"]
                turn += 1
                got = {}
                for name in order:
                    c, w, found = ask(name, kind, q)
                    cpu[kind][name].append(c)
                    wall[kind][name].append(w)
                    got[name] = found
                same[kind] += got["base"] == got["branch"]
        out["results"] = {kind: {name: {"wall_ms": _stats(wall[kind][name]), "cpu_ms": _stats(cpu[kind][name])}
                                 for name in procs} | {"identical_answers": f"{same[kind]}/{len(qs[kind])}"}
                          for kind in KINDS}
        out["pending_pages_end"] = {"base": pending_pages(base_url), "branch": pending_pages(branch_url)}
    finally:
        for p in procs.values():
            if p.stdin is not None:
                p.stdin.close()
            p.wait(timeout=60)
        server.stop()
    out["loadavg_end"] = os.getloadavg()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
