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

``--corpus natural`` (issue 15's latency goal): ``bench/natural_corpus.py``'s natural English
chat instead (recurring names, events and places; the queries of ``bench/sessions.py --corpora
natural``: its questions and two-word queries, seed + 2 and seed + 1), loaded fast (:func:`load_natural`:
COPY into a staging table, one ``INSERT ... SELECT`` with the search indexes dropped and then
built once, each row's previous-turn vector computed as the trigger computes it, and checked
against it on a sample). The loaded database is kept as a template (``nat_<size>_s<seed>``) in
the cluster: with ``--cluster DIR`` the cluster lives in ``DIR`` and survives the run, so a 1M
corpus is loaded once and every later run only copies it (``CREATE DATABASE ... STRATEGY
FILE_COPY``). Without ``--base-src`` only this checkout is timed (one worker).

The server loads ``pg_stat_statements`` (``track_planning`` on), so each call is also timed on
the server: planning and execution ms of every statement the call sent, summed (``server_plan_ms``,
``server_exec_ms``; read between calls, outside the timed window).

    python bench/pg_search_ab.py --corpus natural --size 1000000 --cluster /tmp/pg1m [--base-src ...]

``--drop-on-base INDEX`` times one index alone: both workers run this checkout, the base on a copy
of the branch's migrated database with ``INDEX`` dropped, so rows, statistics (a migration that
runs ``ANALYZE`` resamples them, and the term frequencies search estimates from them change the
ranking) and code are the same on both sides.

Prints one JSON object: per kind and version p50/p95 of wall and CPU ms and of the server's
planning and execution ms, the number of queries with identical answers, per kind and version the
statements with the most server time (per call: executions, planning and execution ms, shared
blocks), each copy's GIN pending pages after the load and at the end, the load average before and after.
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


PER_SESSION = 50
"""Messages a session in the natural corpus (as ``bench/sessions.py``'s ``grow``)."""
BASE_TS = 1_700_000_000.0
"""The first message's timestamp (as ``bench/sessions.py``'s ``grow``); message ``n`` is at ``BASE_TS + n``."""
CONTEXT_CHECK_ROWS = 500
"""Rows whose bulk-computed previous-turn vector is checked against the trigger's function."""


def load_natural(url: str, size: int, seed: int) -> dict[str, float]:
    """Load ``size`` messages of ``bench/natural_corpus.py`` (``seed``) into the empty database
    ``url``, in the schema of the ``hermes_memory`` on the path (opening it migrates), as
    ``bench/sessions.py``'s ``grow`` would append them (sessions of :data:`PER_SESSION`, user and
    assistant alternating, message ``n`` at ``BASE_TS + n``), but in bulk: the messages' indexes
    other than the primary key are dropped, the rows COPYed into a staging table and inserted by
    one statement with the triggers off, ``hm_context`` set to what trigger
    ``hm_messages_context_bi`` computes (the previous turn's vector; checked on
    :data:`CONTEXT_CHECK_ROWS` random rows against ``hm_context_of``, raising ``RuntimeError``
    on a difference), then the indexes built again from their own definitions, then ``VACUUM
    ANALYZE``. Returns the seconds of each phase."""
    import psycopg

    sys.path.insert(0, str(ROOT / "bench"))
    from natural_corpus import NaturalCorpus

    from hermes_memory.sessions.hmcontext import NEIGHBOUR_CHARS
    from hermes_memory.sessions.pg import PgSessionDB
    from hermes_memory.sessions.pg.search_schema import NORMALISE, TS_CONFIG

    t0 = time.perf_counter()
    db: Any = PgSessionDB(url)  # the schema, by this version's migrations
    db.close()
    times: dict[str, float] = {"messages": size}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")  # no triggers, no FK checks: rows are built consistent
        conn.execute("SET maintenance_work_mem = '512MB'")
        indexes = conn.execute("SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index "
                               "WHERE indrelid = 'messages'::regclass AND NOT indisprimary").fetchall()
        for name, _ in indexes:
            conn.execute(f"DROP INDEX {name}")
        conn.execute("CREATE UNLOGGED TABLE hm_bench_stage (id bigint, session_id text, role text, content text, "
                     "ts double precision)")
        n = 0
        with conn.cursor() as cur:
            with cur.copy("COPY sessions (id, source, started_at, message_count) FROM STDIN") as cp:
                for k in range(0, size, PER_SESSION):
                    cp.write_row((f"nat{k // PER_SESSION:07d}", "bench", BASE_TS + k, min(PER_SESSION, size - k)))
            with cur.copy("COPY hm_bench_stage FROM STDIN") as cp:
                for text in NaturalCorpus(seed).messages(size):
                    j = n % PER_SESSION
                    cp.write_row((n + 1, f"nat{n // PER_SESSION:07d}", "user" if j % 2 == 0 else "assistant", text,
                                  BASE_TS + n))
                    n += 1
        times["generate_copy_s"] = round(time.perf_counter() - t0, 1)
        vec = (f"setweight(to_tsvector('{TS_CONFIG}'::regconfig, regexp_replace(left(prev, {NEIGHBOUR_CHARS}), "
               f"{NORMALISE}, ' ', 'g')), 'D')")
        conn.execute(
            "INSERT INTO messages (id, session_id, role, content, timestamp, hm_context) "
            f"SELECT id, session_id, role, content, ts, CASE WHEN prev IS NOT NULL THEN {vec} END FROM ("
            " SELECT s.*, lag(content) OVER (PARTITION BY session_id ORDER BY ts, id) AS prev FROM hm_bench_stage s) x")
        conn.execute("DROP TABLE hm_bench_stage")
        conn.execute("SELECT setval(pg_get_serial_sequence('messages', 'id'), (SELECT max(id) FROM messages))")
        times["insert_s"] = round(time.perf_counter() - t0 - times["generate_copy_s"], 1)
        t1 = time.perf_counter()
        for _, definition in indexes:
            conn.execute(definition)
        times["index_s"] = round(time.perf_counter() - t1, 1)
        t1 = time.perf_counter()
        conn.execute("VACUUM ANALYZE messages")
        conn.execute("VACUUM ANALYZE sessions")
        times["vacuum_analyze_s"] = round(time.perf_counter() - t1, 1)
        bad_row = conn.execute(
            "SELECT count(*) FROM (SELECT id, session_id, timestamp, hm_context FROM messages "
            "ORDER BY hashint8(id) LIMIT %s) m "
            "WHERE m.hm_context IS DISTINCT FROM hm_context_of(m.session_id, m.timestamp, m.id)",
            [CONTEXT_CHECK_ROWS]).fetchone()
        bad = int(bad_row[0]) if bad_row else CONTEXT_CHECK_ROWS
        if bad:
            raise RuntimeError(f"{bad} of {CONTEXT_CHECK_ROWS} bulk-loaded rows have another hm_context than the trigger gives")
    times["load_s"] = round(time.perf_counter() - t0, 1)
    return times


def natural_queries(seed: int, n: int) -> dict[str, list[str]]:
    """``bench/sessions.py --corpora natural``'s queries: ``n`` two-word queries and ``n`` questions."""
    sys.path.insert(0, str(ROOT / "bench"))
    from natural_corpus import NaturalCorpus

    corpus = NaturalCorpus(seed)
    nl = corpus.questions(n, seed + 2)
    return {"two_word": corpus.two_words(n, seed + 1), "question": nl, "tool": nl, "tool_role_user": nl}


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


SERVER_SETTINGS = {"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track_planning": "on",
                   "pg_stat_statements.max": "10000", "shared_buffers": "512MB"}
"""The bench server's settings beyond tests/pgserver.py's: per-statement server times, and shared
buffers that hold a 1M-message corpus' hot pages (a team server is tuned at least that far)."""
_SERVER_TIMES = ("SELECT left(regexp_replace(regexp_replace(query, '\\s+', ' ', 'g'), '\\$\\d+', '$', 'g'), 110), calls, total_plan_time, "
                 "total_exec_time, shared_blks_hit + shared_blks_read FROM pg_stat_statements "
                 "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s)")
TOP_STATEMENTS = 6
"""Statements listed per kind and version (most server time over the timed calls first)."""


def _top(acc: dict[str, list[Any]], calls: int) -> list[dict[str, Any]]:
    """The :data:`TOP_STATEMENTS` statements of ``acc`` (start -> [start, calls, plan, exec, blocks])
    with the most planning + execution time, per tool/search call (``calls`` of them)."""
    rows = sorted(acc.values(), key=lambda r: -(r[2] + r[3]))[:TOP_STATEMENTS]
    return [{"statement": r[0], "per_call": round(r[1] / calls, 2), "plan_ms": round(r[2] / calls, 2),
             "exec_ms": round(r[3] / calls, 2), "blocks": round(r[4] / calls)} for r in rows]


def _template(server: Any, args: argparse.Namespace, load_src: str) -> tuple[str, dict[str, Any]]:
    """The loaded database to copy (name, load report): loaded now unless the cluster holds it."""
    name = f"nat_{args.size}_s{args.seed}" if args.corpus == "natural" else f"syn_{args.size}_s{args.seed}"
    if server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{name}'").strip():
        report = server.psql(f"SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = '{name}'")
        return name, {"reused": True, **json.loads(report or "{}")}
    url = server.create_database(name + "_loading")
    done = subprocess.run([sys.executable, __file__, "--load", url, str(args.size), "--seed", str(args.seed),
                           "--corpus", args.corpus], env=dict(os.environ, PYTHONPATH=load_src), cwd=str(ROOT),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"loading failed:\n{done.stderr[-4000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    server.psql(f'ALTER DATABASE "{name}_loading" RENAME TO "{name}"')
    server.psql(f"COMMENT ON DATABASE \"{name}\" IS '{json.dumps(report)}'")
    return name, report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000, help="messages in the corpus")
    ap.add_argument("--base-src", help="the old tree's src folder (without it only this checkout is timed)")
    ap.add_argument("--corpus", choices=("synthetic", "natural"), default="synthetic")
    ap.add_argument("--cluster", help="keep the server's cluster (and the loaded corpus) in this folder")
    ap.add_argument("--drop-on-base", metavar="INDEX",
                    help="instead of --base-src: both workers run this checkout, the base on a copy of the "
                         "branch's migrated database without INDEX (same rows and statistics: only the index differs)")
    ap.add_argument("--no-server-times", action="store_true",
                    help="do not read pg_stat_statements between calls (to see what reading it costs)")
    ap.add_argument("--queries", type=int, default=60, help="queries of each kind")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--load", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker)
        return
    if args.load:
        loader = load_natural if args.corpus == "natural" else load
        print(json.dumps(loader(args.load[0], int(args.load[1]), args.seed)))
        return
    sys.path.insert(0, str(ROOT))
    import psycopg
    from tests.pgserver import PostgresServer

    server = PostgresServer(root=Path(args.cluster) if args.cluster else None, settings=SERVER_SETTINGS).start()
    out: dict[str, Any] = {"bench": "pg_search_ab", "corpus": args.corpus, "size": args.size,
                           "loadavg_start": os.getloadavg()}
    procs: dict[str, subprocess.Popen[str]] = {}
    if args.drop_on_base and args.base_src:
        ap.error("--drop-on-base and --base-src exclude each other")
    base_src = str(ROOT / "src") if args.drop_on_base else args.base_src
    srcs = {"base": base_src, "branch": str(ROOT / "src")} if base_src else {"branch": str(ROOT / "src")}
    order = sorted(srcs, key=lambda n: n == "base") if args.drop_on_base else list(srcs)  # the branch's copy first
    try:
        template, out["load"] = _template(server, args, srcs.get("base") or srcs["branch"])
        urls = {}
        for name in srcs:
            server.psql(f"DROP DATABASE IF EXISTS ab_{name} WITH (FORCE)")
            urls[name] = server.url.rsplit("/", 1)[0] + f"/ab_{name}"
        for name in order:
            if name == "base" and args.drop_on_base:  # the branch's migrated copy, less one index
                subprocess.run([sys.executable, "-c", "import sys; from hermes_memory.sessions.pg import PgSessionDB; "
                                "PgSessionDB(sys.argv[1]).close()", urls["branch"]], check=True, cwd=str(ROOT),
                               env=dict(os.environ, PYTHONPATH=srcs["branch"]))
                server.psql("CREATE DATABASE ab_base TEMPLATE ab_branch STRATEGY FILE_COPY")
                server.psql(f"DROP INDEX {args.drop_on_base}", database="ab_base")
                out["base"] = f"this checkout without index {args.drop_on_base}"
                continue
            server.psql(f"CREATE DATABASE ab_{name} TEMPLATE {template} STRATEGY FILE_COPY")
        out["pending_pages_after_load"] = pending_pages(urls[next(iter(srcs))])
        t0 = time.perf_counter()
        for name, src in srcs.items():  # opening applies each version's migrations
            procs[name] = _spawn(src, urls[name])
            out[f"open_{name}_s"] = round(time.perf_counter() - t0, 1)
            t0 = time.perf_counter()
        out["pending_pages_branch_after_open"] = pending_pages(urls["branch"])
        qs = (natural_queries if args.corpus == "natural" else queries)(args.seed, args.queries)
        stats = psycopg.connect(server.url, autocommit=True)
        stats.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")

        acc: dict[str, dict[str, dict[str, list[Any]]]] = {k: {n: {} for n in procs} for k in KINDS}

        def ask(name: str, kind: str, q: str, timed: bool = False) -> list[Any]:
            p = procs[name]
            assert p.stdin is not None and p.stdout is not None
            if not args.no_server_times:
                stats.execute("SELECT pg_stat_statements_reset()")
            p.stdin.write(json.dumps([kind, q]) + "\n")
            p.stdin.flush()
            got = list(json.loads(p.stdout.readline()))
            rows = [] if args.no_server_times else stats.execute(_SERVER_TIMES, [f"ab_{name}"]).fetchall()
            for text, n, plan_ms, exec_ms, blocks in rows if timed else []:  # grouped by their start
                a = acc[kind][name].setdefault(text, [text, 0, 0.0, 0.0, 0])
                a[1] += int(n)
                a[2] += float(plan_ms)
                a[3] += float(exec_ms)
                a[4] += int(blocks)
            return [*got, sum(float(r[2]) for r in rows), sum(float(r[3]) for r in rows)]

        for kind in KINDS:  # warm-up: stems, term counts, connections
            for q in qs[kind][:10]:
                for name in procs:
                    ask(name, kind, q)
        series = ("wall_ms", "cpu_ms", "server_plan_ms", "server_exec_ms")
        got_ms: dict[str, dict[str, dict[str, list[float]]]] = {
            k: {n: {s: [] for s in series} for n in procs} for k in KINDS}
        same = dict.fromkeys(KINDS, 0)
        turn = 0
        for kind in KINDS:
            for q in qs[kind]:
                order = list(procs) if turn % 2 == 0 else list(procs)[::-1]
                turn += 1
                got = {}
                for name in order:
                    c, w, found, plan_ms, exec_ms = ask(name, kind, q, timed=True)
                    for key, v in zip(series, (w, c, plan_ms, exec_ms), strict=True):
                        got_ms[kind][name][key].append(v)
                    got[name] = found
                same[kind] += got.get("base", got["branch"]) == got["branch"]
        out["results"] = {kind: {name: {key: _stats(v) for key, v in got_ms[kind][name].items()} for name in procs}
                          | {"identical_answers": f"{same[kind]}/{len(qs[kind])}"}
                          for kind in KINDS}
        out["statements"] = {kind: {name: _top(acc[kind][name], len(qs[kind])) for name in procs} for kind in KINDS}
        out["pending_pages_end"] = {name: pending_pages(urls[name]) for name in procs}
        stats.close()
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
