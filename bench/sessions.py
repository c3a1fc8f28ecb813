"""SessionDB benchmark: append throughput, search latency at growing sizes on two corpora, bytes on disk.

Prints one JSON object. Run: ``python bench/sessions.py [--sizes 100000,1000000] [--corpora
synthetic,natural] [--compare] [--agreement 20]``.

* append: messages/second committing each message (``append_message``) and in batches
  (``append_messages``, one transaction per batch), on a fresh database.
* search, for each corpus and size: p50/p95/mean latency in ms, wall-clock and CPU time of this
  thread (``cpu_*``: what the search itself costs when other processes share the cores), of
  two-word keyword queries and natural-language questions through ``search_messages`` (limit 20,
  relevance order, context included) and of whole ``session_search`` discovery calls (JSON
  included), over ``--queries`` queries each, after a warm-up pass with the first 10.
  ``--compare`` runs every query under :data:`BEFORE` (the settings of the release before the
  term-statistics work) and the current settings in turn, so both see the same machine load.
  ``--agreement N``: the share of an uncapped search's top 10 that the bounded search keeps,
  over N questions (:func:`agreement`).
* ``--vectors N`` (with ``--existing``): semantic search on over a partly indexed store: random
  unit vectors for the newest N user/assistant messages written to ``hm_embeddings`` (once; the
  file is changed, so pass a copy), then questions and ``session_search`` calls again with fusion
  on (``embeddings`` in the JSON). The query's own embedding is left out (a cached random vector:
  ``bench/embeddings.py`` times the real model's); what is timed is the cosine scan of the N
  vectors, the filter check of the nearest and the fusion.
* ``--cold N`` (with ``--existing``): the first ``session_search`` call of N fresh processes (one
  question each), CPU ms, beside the same call again in that process: what the CLI and the hooks
  pay. Term frequencies other processes stored (``hm_term_df``) are used, so run it after a
  measurement has searched the file once.
* disk: bytes on disk per byte of message text, and the full-text index overhead (pages of our
  FTS tables divided by raw text bytes) from SQLite's ``dbstat``; CJK queries (1-2 char and 3+
  char) on the synthetic corpus.

Corpora (fixed seed, user and assistant alternating, 50 messages per session):

* ``synthetic``: a Zipf-distributed vocabulary of 30,000 pseudo-words plus English function
  words, 8-60 words per message, ``--cjk-share`` of messages (default 2 %) in Chinese; questions
  are templates around mid-frequency words, which are rare: every question has a selective word.
* ``natural``: natural English chat (``bench/natural_corpus.py``): Zipf vocabulary of English
  words, twelve names each in 7-15 % of messages, recurring events and places; the words of a
  question ("When did Caroline go to the pottery class?") are common ones.

Built databases are kept under ``--cache`` (default ``~/.cache/hermes-memory/bench``) and reused;
an interrupted build resumes. They are built without the reference agent's own full-text
triggers (its ``messages_fts`` and trigram tables stay empty): those cost three quarters of the
build time and our search never reads them.
Targets (issues 3 and 15): natural-language p95 <= 20 ms at 1M messages on both corpora; index
overhead <= 1.0x text.
Re-measure the 1M figures of docs/benchmarks.md (databases kept under /tmp and reused):
``python bench/sessions.py --sizes 1000000 --no-append --cache /tmp/latency-bench --agreement 20``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from hermes_memory.sessions import embeddings as emb
from hermes_memory.sessions import ranking, refschema, term_stats
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import session_search

sys.path.insert(0, str(Path(__file__).resolve().parent))
from natural_corpus import NaturalCorpus  # noqa: E402

FUNCTION_WORDS = (
    "the a to of and in is it that for on with as was be this are at by not or from have but "
    "we you i they he she what when how which can will would should about there their if so"
).split()
CJK_POOL = "记忆断裂问题已经修复会议讨论排期部署数据库服务器测试用户配置文件日志错误缓存索引查询网络请求超时版本发布计划"


def make_vocab(rng: random.Random, n: int) -> list[str]:
    syll = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "su", "do", "ga", "hi", "ba", "te", "ri", "xo"]
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(syll) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Corpus:
    def __init__(self, seed: int, cjk_share: float) -> None:
        self.rng = random.Random(seed)
        self.np = np.random.default_rng(seed)
        self.vocab = make_vocab(self.rng, 30_000)
        ranks = np.arange(1, len(self.vocab) + 1)
        p = 1.0 / ranks**1.05
        self.p = p / p.sum()
        self.cjk_share = cjk_share

    def message(self) -> str:
        if self.rng.random() < self.cjk_share:
            n = self.rng.randint(8, 40)
            return "".join(self.rng.choice(CJK_POOL) for _ in range(n)) + " " + self.vocab[self.rng.randint(0, 3000)]
        n = int(self.rng.randint(8, 60))
        idx = self.np.choice(len(self.vocab), size=n, p=self.p)
        words = [self.vocab[i] if self.rng.random() > 0.35 else self.rng.choice(FUNCTION_WORDS) for i in idx]
        return " ".join(words)

    def batch(self, k: int) -> list[str]:
        """``k`` messages like :meth:`message`, drawn in one vectorised pass (for building large
        databases; a different stream of the same distribution)."""
        g = self.np
        cjk = g.random(k) < self.cjk_share
        lens = g.integers(8, 61, size=k)
        words = np.array(self.vocab)[g.choice(len(self.vocab), size=int(lens.sum()), p=self.p)]
        fw = np.array(FUNCTION_WORDS)[g.integers(0, len(FUNCTION_WORDS), size=words.size)]
        words = np.where(g.random(words.size) < 0.35, fw, words).tolist()
        cuts = np.concatenate([[0], np.cumsum(lens)]).tolist()
        out = []
        for i in range(k):
            if cjk[i]:
                n = int(g.integers(8, 41))
                pool = g.integers(0, len(CJK_POOL), size=n).tolist()
                out.append("".join(CJK_POOL[j] for j in pool) + " " + self.vocab[int(g.integers(0, 3001))])
            else:
                out.append(" ".join(words[cuts[i]:cuts[i + 1]]))
        return out

    def mid_word(self) -> str:
        return self.vocab[self.rng.randint(200, 8000)]

    def two_word(self) -> str:
        return f"{self.mid_word()} {self.mid_word()}"

    def question(self) -> str:
        a, b, c = self.mid_word(), self.mid_word(), self.vocab[self.rng.randint(20, 400)]
        return self.rng.choice(
            [
                f"What did we decide about the {a} and {b} last week?",
                f"When did I mention {a} together with {c}?",
                f"How did you fix the {a} problem in {b}?",
                f"Which {c} did we pick for the {a} {b} migration?",
                f"Can you remind me what {a} said about {b} and the {c}?",
            ]
        )


def stored_cjk_substrings(db: SessionDB, n: int, seed: int) -> list[str]:
    """``n`` 4-character substrings of stored CJK messages (queries that do occur in the text)."""
    rng = random.Random(seed)
    rows = [r[0] for r in db.conn.execute("SELECT content FROM hm_messages_cjk ORDER BY rowid LIMIT 2000")]
    out = []
    for _ in range(n if rows else 0):
        text = rng.choice(rows)
        start = rng.randint(0, max(0, min(len(text), 12) - 4))
        out.append(text[start : start + 4])
    return out or ["记忆断裂"]


def grow(db: SessionDB, texts: Iterator[str], start: int, target: int, per_session: int = 50) -> tuple[int, float]:
    """Append messages from ``texts`` until the database holds ``target``, ``per_session`` per
    session, user and assistant alternating; returns (text bytes, seconds)."""
    text_bytes = 0
    t0 = time.perf_counter()
    n = start
    base_ts = 1_700_000_000.0
    while n < target:
        sid = db.create_session(source="bench", started_at=base_ts + n)
        batch = []
        for j in range(min(per_session, target - n)):
            text = next(texts)
            text_bytes += len(text.encode())
            batch.append({"role": "user" if j % 2 == 0 else "assistant", "content": text, "timestamp": base_ts + n + j})
        db.append_messages(sid, batch)
        n += len(batch)
    return text_bytes, time.perf_counter() - t0


def _stats(wall: list[float], cpu: list[float], hits: int) -> dict[str, float]:
    wall, cpu = sorted(wall), sorted(cpu)
    p95 = int(0.95 * (len(wall) - 1))
    return {
        "p50_ms": round(statistics.median(wall), 3),
        "p95_ms": round(wall[p95], 3),
        "mean_ms": round(statistics.fmean(wall), 3),
        "cpu_p50_ms": round(statistics.median(cpu), 3),
        "cpu_p95_ms": round(cpu[p95], 3),
        "queries": len(wall),
        "with_hits": hits,
    }


Variants = dict[str, dict[tuple[object, str], object]]
"""name -> {(module, attribute): value}: settings a query is run under (``--compare``)."""


def latency(db: SessionDB, queries: list[str], tool: bool = False,
            variants: Variants | None = None, dbs: dict[str, SessionDB] | None = None) -> dict[str, object]:
    """Latency of ``queries`` (after a warm-up with the first 10): wall-clock and CPU (this
    thread's) milliseconds. With ``variants`` each query runs under every variant in turn, so
    the variants share the machine's load, each on its connection in ``dbs`` (default ``db``);
    returns ``{variant: stats}`` then."""
    def one(q: str, name: str) -> bool:
        conn = (dbs or {}).get(name, db)
        if tool:
            return json.loads(session_search({"query": q}, conn))["count"] > 0
        return bool(conn.search_messages(q, limit=20))

    runs = variants or {"": {}}
    saved = {key: getattr(*key) for settings in runs.values() for key in settings}  # type: ignore[call-overload]
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    hits = dict.fromkeys(runs, 0)
    try:
        for warm, batch in ((True, queries[:10]), (False, queries)):
            for q in batch:
                for name, settings in runs.items():
                    for (mod, attr), value in settings.items():
                        setattr(mod, attr, value)
                    t0, c0 = time.perf_counter(), time.thread_time()
                    found = one(q, name)
                    if not warm:
                        cpu[name].append((time.thread_time() - c0) * 1000)
                        wall[name].append((time.perf_counter() - t0) * 1000)
                        hits[name] += found
    finally:
        for (mod, attr), value in saved.items():
            setattr(mod, attr, value)
    out = {name: _stats(wall[name], cpu[name], hits[name]) for name in runs}
    return out if variants else out[""]


UNCAPPED: dict[tuple[object, str], object] = {(ranking, "POSTINGS_BUDGET"): 10**12,
                                             (ranking, "SINGLE_TERM_WINDOW"): 10**12}
"""Settings under which a relevance search scores every row matching any query word."""


def agreement(db: SessionDB, questions: list[str], variants: Variants | None, k: int = 10,
              dbs: dict[str, SessionDB] | None = None) -> dict[str, object]:
    """How much of the top ``k`` of an uncapped search (:data:`UNCAPPED`: every matching row
    scored) each variant's bounded search keeps: the mean share of those ids in its own top
    ``k``. The quality cost of the posting budget and recency window, on a corpus without
    relevance judgements."""
    def top(q: str, settings: dict[tuple[object, str], object], name: str = "") -> list[int]:
        saved = {key: getattr(*key) for key in settings}  # type: ignore[call-overload]
        try:
            for (mod, attr), value in settings.items():
                setattr(mod, attr, value)
            conn = (dbs or {}).get(name, db)
            return [r["id"] for r in conn.search_messages(q, limit=k, with_context=False, with_snippet=False)]
        finally:
            for (mod, attr), value in saved.items():
                setattr(mod, attr, value)

    runs = variants or {"": {}}
    shares: dict[str, list[float]] = {name: [] for name in runs}
    for q in questions:
        full = set(top(q, UNCAPPED))
        for name, settings in runs.items():
            if full:
                shares[name].append(len(full & set(top(q, settings, name))) / len(full))
    out = {name: {f"share_of_uncapped_top{k}": round(statistics.fmean(v), 3) if v else None, "questions": len(v)}
           for name, v in shares.items()}
    return out if variants else out[""]


def disk(db: SessionDB, text_bytes: int) -> dict[str, float]:
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    sizes = dict(db.conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall())
    fts = sum(v for k, v in sizes.items() if k.startswith("hm_messages_fts"))
    cjk = sum(v for k, v in sizes.items() if k.startswith("hm_messages_cjk"))
    total = os.path.getsize(db.db_path)
    n = db.message_count() or 1
    return {
        "file_bytes": total,
        "text_bytes": text_bytes,
        "messages": n,
        "file_bytes_per_message": round(total / n, 1),
        "text_bytes_per_message": round(text_bytes / n, 1),
        "fts_index_bytes_per_message": round(fts / n, 1),
        "bytes_on_disk_per_text_byte": round(total / text_bytes, 3),
        "fts_index_bytes": fts,
        "fts_index_overhead_vs_text": round(fts / text_bytes, 3),
        "cjk_side_table_bytes": cjk,
        "messages_table_bytes": sizes.get("messages", 0),
    }


def append_throughput(tmp: Path, corpus: Corpus, single: int, batched: int) -> dict[str, float]:
    db = SessionDB(tmp / "append.db")
    sid = db.create_session(source="bench")
    texts = [corpus.message() for _ in range(single)]
    t0 = time.perf_counter()
    for t in texts:
        db.append_message(sid, "user", t)
    each = single / (time.perf_counter() - t0)
    texts = [corpus.message() for _ in range(batched)]
    t0 = time.perf_counter()
    for i in range(0, batched, 100):
        db.append_messages(sid, [{"role": "user", "content": t} for t in texts[i : i + 100]])
    batch = batched / (time.perf_counter() - t0)
    db.close()
    return {
        "commit_each_msgs_per_s": round(each, 1),
        "batch_of_100_msgs_per_s": round(batch, 1),
        "batch_over_each_ratio": round(batch / each, 2),
        "messages_each": single,
        "messages_batched": batched,
    }


def cached_db(corpus_name: str, size: int, seed: int, cjk_share: float, cache: Path,
              make_texts: Callable[[int, int], list[str]]) -> tuple[Path, dict[str, object]]:
    """The path of a database holding the first ``size`` messages of ``corpus_name``, built once
    and kept under ``cache`` (a smaller cached size of the same corpus is grown, copied first).
    ``make_texts(start, count)`` returns messages ``start .. start+count`` of the corpus, in order.
    Returns ``(path, {"cached": bool, "load_msgs_per_s": float | None, "text_bytes": int})``."""
    cache.mkdir(parents=True, exist_ok=True)
    tag = f"{corpus_name}-seed{seed}" + (f"-cjk{cjk_share}" if corpus_name == "synthetic" else "")
    path = cache / f"{tag}-{size}.db"
    if path.exists():
        db = SessionDB(path)
        tb = db.conn.execute("SELECT coalesce(sum(length(CAST(content AS BLOB))), 0) FROM messages").fetchone()[0]
        db.close()
        return path, {"cached": True, "load_msgs_per_s": None, "text_bytes": int(tb)}
    smaller = sorted((int(p.stem.rsplit("-", 1)[1]), p) for p in cache.glob(f"{tag}-*.db")
                     if p.stem.rsplit("-", 1)[1].isdigit() and int(p.stem.rsplit("-", 1)[1]) < size)
    work = path.with_suffix(".building")
    have = 0
    if work.exists():  # an interrupted build: every committed session is kept, resume after them
        db = SessionDB(work)
        have = db.message_count()
    else:
        for extra in (Path(str(work) + "-wal"), Path(str(work) + "-shm")):
            extra.unlink(missing_ok=True)
        if smaller:
            have, src = smaller[-1]
            shutil.copyfile(src, work)
        db = SessionDB(work)
    db.conn.execute("PRAGMA synchronous=OFF")  # a cache we can rebuild: no fsync per session
    for table in refschema.REFERENCE_FTS_TABLES:  # see the module doc: our search never reads them
        for name in refschema.REFERENCE_TRIGGERS[table]:
            db.conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
    texts = make_texts(have, size - have)
    added, secs = grow(db, iter(texts), have, size)
    tb = db.conn.execute("SELECT coalesce(sum(length(CAST(content AS BLOB))), 0) FROM messages").fetchone()[0]
    db.close()
    work.rename(path)
    return path, {"cached": False, "load_msgs_per_s": round((size - have) / secs, 1) if secs else None,
                  "text_bytes": int(tb)}


def measure(db: SessionDB, queries: dict[str, list[str]], text_bytes: int, cjk: bool, seed: int,
            variants: Variants | None = None, agree: int = 0,
            dbs: dict[str, SessionDB] | None = None) -> dict[str, object]:
    """Search latencies of one database: ``two_word`` and ``natural_language`` through
    ``search_messages``, the ``session_search`` tool, CJK queries when ``cjk``; the
    :func:`agreement` of the first ``agree`` questions; and its disk use."""
    nl = queries["natural_language"]
    out: dict[str, object] = {
        "two_word": latency(db, queries["two_word"], variants=variants, dbs=dbs),
        "natural_language": latency(db, nl, variants=variants, dbs=dbs),
        "session_search_tool_natural_language": latency(db, nl[: max(20, len(nl) // 4)], tool=True,
                                                        variants=variants, dbs=dbs),
    }
    if cjk:
        n_cjk = max(20, len(nl) // 5)
        out["cjk_1_2_chars"] = latency(db, ["".join(random.Random(i).sample(CJK_POOL, 2)) for i in range(n_cjk)],
                                       variants=variants, dbs=dbs)
        out["cjk_3plus_chars"] = latency(db, stored_cjk_substrings(db, n_cjk, seed), variants=variants, dbs=dbs)
    if agree:
        out["agreement_natural_language"] = agreement(db, nl[:agree], variants, dbs=dbs)
    out["disk"] = disk(db, text_bytes)
    return out


def attach_vectors(db: SessionDB, n: int, seed: int) -> int:
    """Give ``db`` semantic search over random unit vectors of its newest ``n`` user/assistant
    messages (model ``"bench"``; written once, kept in the file), the query vectors random too
    (seeded by the query text). Returns the vectors stored."""
    model = "bench"
    have = 0
    if emb.has_table(db.conn):
        have = db.conn.execute(f"SELECT count(*) FROM {emb.TABLE} WHERE model = ?", (model,)).fetchone()[0]
    if have < n:
        rows = db.conn.execute("SELECT id, role, content FROM messages WHERE role IN ('user', 'assistant') "
                               "ORDER BY id DESC LIMIT ?", (n,)).fetchall()
        g = np.random.default_rng(seed)
        for at in range(0, len(rows), 5000):
            chunk = [(int(r[0]), emb.embed_text(r[1], r[2])) for r in rows[at:at + 5000]]
            vecs = g.standard_normal((sum(1 for _, t in chunk if t), emb.DIM)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            db._execute_write(lambda c, chunk=chunk, vecs=vecs: emb.store(c, model, chunk, vecs))
    sem = emb.SemanticSearch.__new__(emb.SemanticSearch)
    sem.index, sem.weight, sem.k = emb.VectorIndex(model), None, None
    cache: dict[str, np.ndarray] = {}

    def query_vector(q: str) -> np.ndarray:
        if q not in cache:
            v = np.random.default_rng(abs(hash(q)) % 2**32).standard_normal(emb.DIM).astype(np.float32)
            cache[q] = v / np.linalg.norm(v)
        return cache[q]

    sem.query_vector = query_vector  # type: ignore[method-assign]
    db.semantic = sem
    db.search_messages("warm up", limit=1)  # the first search loads the vectors
    return int(db.conn.execute(f"SELECT count(*) FROM {emb.TABLE} WHERE model = ?", (model,)).fetchone()[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated message counts")
    ap.add_argument("--corpora", default="synthetic,natural", help="comma-separated: synthetic, natural")
    ap.add_argument("--queries", type=int, default=200, help="queries per kind and size")
    ap.add_argument("--cjk-share", type=float, default=0.02)
    ap.add_argument("--append-each", type=int, default=2000)
    ap.add_argument("--append-batched", type=int, default=20000)
    ap.add_argument("--no-append", action="store_true", help="skip the append-throughput measurement")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "hermes-memory" / "bench"),
                    help="folder keeping the built databases (reused by later runs)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--existing", default=None, help="measure an already built database (skips growing)")
    ap.add_argument("--agreement", type=int, default=0, metavar="N",
                    help="also compare the top 10 of N questions with an uncapped search (slow at 1M)")
    ap.add_argument("--vectors", type=int, default=0, metavar="N",
                    help="with --existing: also measure with semantic search over N random vectors (changes the file)")
    ap.add_argument("--compare", action="store_true",
                    help="run every query before and after the term-statistics changes, in turn (see BEFORE)")
    ap.add_argument("--cold", type=int, default=0, metavar="N",
                    help="with --existing: also time the first session_search call of N fresh processes")
    ap.add_argument("--cold-one", nargs=2, metavar=("DB", "QUERY"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cold_one:
        print(json.dumps(cold_one(*args.cold_one)))
        return
    variants: Variants | None = {"before": BEFORE, "after": after_settings()} if args.compare else None
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    out: dict[str, object] = {"bench": "sessions", "python": sys.version.split()[0], "sqlite": sqlite3.sqlite_version}
    if not args.no_append and not args.existing:
        with tempfile.TemporaryDirectory() as tmp:
            out["append"] = append_throughput(Path(tmp), Corpus(args.seed + 2, args.cjk_share),
                                              args.append_each, args.append_batched)
    synth = Corpus(args.seed, args.cjk_share)
    qrng = Corpus(args.seed + 1, 0.0)
    qrng.vocab = synth.vocab
    natural = NaturalCorpus(args.seed)
    queries = {
        "synthetic": {"two_word": [qrng.two_word() for _ in range(args.queries)],
                      "natural_language": [qrng.question() for _ in range(args.queries)]},
        "natural": {"two_word": natural.two_words(args.queries, args.seed + 1),
                    "natural_language": natural.questions(args.queries, args.seed + 2)},
    }
    makers: dict[str, Callable[[int, int], list[str]]] = {
        "synthetic": lambda start, count: synthetic_texts(args.seed, args.cjk_share, start, count),
        "natural": lambda start, count: natural_texts(args.seed, start, count),
    }
    results: dict[str, list[dict[str, object]]] = {}
    for name in corpora:
        if name not in makers:
            raise SystemExit(f"--corpora: unknown corpus {name!r} (synthetic, natural)")
        results[name] = []
        for size in ([0] if args.existing else sizes):
            if args.existing:
                path, info = Path(args.existing), {"cached": True, "load_msgs_per_s": None, "text_bytes": 0}
            else:
                path, info = cached_db(name, size, args.seed, args.cjk_share, Path(args.cache), makers[name])
            db = SessionDB(path)
            dbs = {}
            if variants:  # "before" on a connection of its own, with SQLite's default page cache
                dbs["before"] = SessionDB(path)
                dbs["before"].conn.execute(f"PRAGMA cache_size={BEFORE_PAGE_CACHE}")
            row = {"messages": db.message_count(), **{k: v for k, v in info.items() if k != "text_bytes"},
                   **measure(db, queries[name], int(info["text_bytes"]) or 1, name == "synthetic", args.seed,
                           variants, args.agreement, dbs)}
            if args.cold and args.existing:
                row["cold_process"] = cold_processes(path, queries[name]["natural_language"], args.cold)
            if args.vectors and args.existing:
                nl = queries[name]["natural_language"]
                stored = attach_vectors(db, args.vectors, args.seed)
                row["embeddings"] = {"vectors": stored, "natural_language": latency(db, nl),
                                     "session_search_tool_natural_language": latency(db, nl[: max(20, len(nl) // 4)],
                                                                                     tool=True)}
            for other in dbs.values():
                other.close()
            db.close()
            results[name].append(row)
            print(json.dumps({"corpus": name, **row}), file=sys.stderr, flush=True)
    out["search"] = results
    out["targets"] = {
        "natural_language_p95_target_ms": 20.0,
        "fts_index_overhead_target": 1.0,
        **{f"{name}_at_{rows[-1]['messages']}": {
            "natural_language_p95_ms": _p95s(rows[-1]["natural_language"]),
            "two_word_p95_ms": _p95s(rows[-1]["two_word"]),
            "fts_index_overhead_vs_text": rows[-1]["disk"]["fts_index_overhead_vs_text"],  # type: ignore[index]
        } for name, rows in results.items() if rows},
    }
    print(json.dumps(out, indent=2))


def cold_one(path: str, query: str) -> dict[str, float]:
    """CPU ms of this process (``time.process_time``): opening ``path``, its first ``session_search``
    call for ``query``, and the same call again (warm)."""
    c0 = time.process_time()
    db = SessionDB(path)
    c1 = time.process_time()
    session_search({"query": query}, db)
    c2 = time.process_time()
    session_search({"query": query}, db)
    c3 = time.process_time()
    db.close()
    return {"open_ms": (c1 - c0) * 1000, "first_ms": (c2 - c1) * 1000, "again_ms": (c3 - c2) * 1000}


def cold_processes(path: Path, questions: list[str], n: int) -> dict[str, float]:
    """Medians over ``n`` fresh processes (one question each, the CLI's and the hooks' case) of
    :func:`cold_one`: what a process pays for its first query beside what it pays once warm."""
    runs = []
    for q in questions[:n]:
        done = subprocess.run([sys.executable, __file__, "--cold-one", str(path), q], capture_output=True,
                              text=True, check=True)
        runs.append(json.loads(done.stdout))
    return {k: round(statistics.median(r[k] for r in runs), 2) for k in ("open_ms", "first_ms", "again_ms")} | {
        "processes": len(runs)}


def _p95s(stats: object) -> object:
    """``p95_ms`` (and ``cpu_p95_ms``) of one latency result, per variant under ``--compare``."""
    assert isinstance(stats, dict)
    if "p95_ms" in stats:
        return {"wall": stats["p95_ms"], "cpu": stats["cpu_p95_ms"]}
    return {name: _p95s(v) for name, v in stats.items()}


BEFORE: dict[tuple[object, str], object] = {(term_stats, "DF_CACHE"): False, (ranking, "SINGLE_TERM_WINDOW"): 5_000,
                                            (ranking, "DROPPED_TERM_ROWS"): 100}
"""``--compare``'s "before": the settings of the release before the latency work on natural
English (every document frequency read from the index's doclists, a recency window of 5,000
rows, dropped terms checked on the best 100 rows), run on a connection of its own with
:data:`BEFORE_PAGE_CACHE`."""
BEFORE_PAGE_CACHE = -2000
"""SQLite's default page cache (KiB when negative), what connections had before."""


def after_settings() -> dict[tuple[object, str], object]:
    """``--compare``'s "after": the current settings of everything :data:`BEFORE` changes."""
    return {key: getattr(*key) for key in BEFORE}  # type: ignore[call-overload]


def synthetic_texts(seed: int, cjk_share: float, start: int, count: int) -> list[str]:
    """Messages ``start .. start+count`` of the synthetic corpus (regenerated from the seed, in
    batches of 50,000)."""
    corpus = Corpus(seed, cjk_share)
    out: list[str] = []
    done = 0
    while done < start + count:
        batch = corpus.batch(min(50_000, start + count - done))
        lo = max(0, start - done)
        out += batch[lo:]
        done += len(batch)
    return out


def natural_texts(seed: int, start: int, count: int) -> list[str]:
    """Messages ``start .. start+count`` of the natural-English corpus (regenerated from the seed)."""
    it = NaturalCorpus(seed).messages(start + count)
    for _ in range(start):
        next(it)
    return list(it)


if __name__ == "__main__":
    main()
