"""SessionDB benchmark: append throughput, search latency at growing sizes, bytes on disk.

Prints one JSON object. Run: ``python bench/sessions.py [--sizes 10000,100000,1000000]``.

* append: messages/second committing each message (``append_message``) and in batches
  (``append_messages``, one transaction per batch), on a fresh database.
* search: (the tool row: whole ``session_search`` discovery calls, JSON included) for each size (the database is grown in place), p50/p95/mean latency in ms of
  two-word keyword queries and natural-language questions through ``search_messages``
  (limit 20, relevance order), over ``--queries`` queries each, after a warm-up pass.
* disk: bytes on disk per byte of message text, and the full-text index overhead (pages of the
  FTS tables divided by raw text bytes) from SQLite's ``dbstat``. The CJK cost is reported
  separately: the share of CJK rows, the trigram side table's bytes, and the latency of CJK
  queries (1-2 char and 3+ char) next to the English ones.

Synthetic corpus (fixed seed): a Zipf-distributed vocabulary of 30,000 pseudo-words plus
English function words, 8-60 words per message, 50 messages per session, ``--cjk-share`` of
messages (default 2 %) in Chinese. Questions are templates around mid-frequency words.
Targets (issue 3): natural-language p95 <= 20 ms at 1M messages; index overhead <= 1.0x text.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import session_search

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


def grow(db: SessionDB, corpus: Corpus, start: int, target: int, per_session: int = 50) -> tuple[int, float]:
    """Append synthetic messages until the database holds ``target``; returns (text bytes, seconds)."""
    text_bytes = 0
    t0 = time.perf_counter()
    n = start
    base_ts = 1_700_000_000.0
    while n < target:
        sid = db.create_session(source="bench", started_at=base_ts + n)
        batch = []
        for j in range(min(per_session, target - n)):
            text = corpus.message()
            text_bytes += len(text.encode())
            batch.append({"role": "user" if j % 2 == 0 else "assistant", "content": text, "timestamp": base_ts + n + j})
        db.append_messages(sid, batch)
        n += len(batch)
    return text_bytes, time.perf_counter() - t0


def latency(db: SessionDB, queries: list[str], tool: bool = False) -> dict[str, float]:
    def one(q: str) -> bool:
        if tool:
            return json.loads(session_search({"query": q}, db))["count"] > 0
        return bool(db.search_messages(q, limit=20))

    for q in queries[:10]:
        one(q)
    times = []
    hits = 0
    for q in queries:
        t0 = time.perf_counter()
        found = one(q)
        times.append((time.perf_counter() - t0) * 1000)
        hits += found
    times.sort()
    return {
        "p50_ms": round(statistics.median(times), 3),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 3),
        "mean_ms": round(statistics.fmean(times), 3),
        "queries": len(queries),
        "with_hits": hits,
    }


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated message counts")
    ap.add_argument("--queries", type=int, default=200, help="queries per kind and size")
    ap.add_argument("--cjk-share", type=float, default=0.02)
    ap.add_argument("--append-each", type=int, default=2000)
    ap.add_argument("--append-batched", type=int, default=20000)
    ap.add_argument("--dir", default=None, help="work folder (default: a temp folder, removed)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--existing", default=None, help="measure an already built database (skips growing)")
    args = ap.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    tmpctx = tempfile.TemporaryDirectory() if args.dir is None else None
    tmp = Path(args.dir or tmpctx.name)  # type: ignore[union-attr]
    tmp.mkdir(parents=True, exist_ok=True)
    corpus = Corpus(args.seed, args.cjk_share)
    out: dict[str, object] = {"bench": "sessions", "python": sys.version.split()[0]}
    import sqlite3

    out["sqlite"] = sqlite3.sqlite_version
    out["append"] = (
        None if args.existing else append_throughput(tmp, corpus, args.append_each, args.append_batched)
    )
    qrng = Corpus(args.seed + 1, 0.0)
    qrng.vocab = corpus.vocab
    two = [qrng.two_word() for _ in range(args.queries)]
    nl = [qrng.question() for _ in range(args.queries)]
    cjk_short = ["".join(random.Random(i).sample(CJK_POOL, 2)) for i in range(max(20, args.queries // 5))]
    n_cjk = max(20, args.queries // 5)
    if args.existing:
        # measure search and disk on a database built earlier by this script (same seed/corpus)
        db = SessionDB(args.existing)
        n = db.message_count()
        tb = db.conn.execute("SELECT coalesce(sum(length(CAST(content AS BLOB))), 0) FROM messages").fetchone()[0]
        sizes, plan_sizes = [n], [(n, tb, 0.0)]
    else:
        db_path = tmp / "search.db"
        if db_path.exists():
            db_path.unlink()
        db = SessionDB(db_path)
        plan_sizes = []
    have, text_bytes, results = 0, 0, []
    for size in sizes:
        if args.existing:
            _, text_bytes, load_rate = plan_sizes[0]
            load_rate = None
        else:
            added, secs = grow(db, corpus, have, size)
            text_bytes += added
            load_rate = round((size - have) / secs, 1) if secs else 0.0
        have = size
        results.append(
            {
                "messages": size,
                "load_msgs_per_s": load_rate,
                "two_word": latency(db, two),
                "natural_language": latency(db, nl),
                "session_search_tool_natural_language": latency(db, nl[: max(20, len(nl) // 4)], tool=True),
                "cjk_1_2_chars": latency(db, cjk_short),
                "cjk_3plus_chars": latency(db, stored_cjk_substrings(db, n_cjk, args.seed)),
                "disk": disk(db, text_bytes),
            }
        )
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    out["search"] = results
    last = results[-1]
    out["targets"] = {
        "natural_language_p95_ms_at_largest": last["natural_language"]["p95_ms"],  # type: ignore[index]
        "natural_language_p95_target_ms": 20.0,
        "fts_index_overhead_vs_text": last["disk"]["fts_index_overhead_vs_text"],  # type: ignore[index]
        "fts_index_overhead_target": 1.0,
        "largest_size": last["messages"],
    }
    out["cjk_cost"] = {
        "cjk_share_of_messages": args.cjk_share,
        "side_table_bytes_per_cjk_text_byte_estimate": None,
        "side_table_bytes": last["disk"]["cjk_side_table_bytes"],  # type: ignore[index]
        "side_table_share_of_file": round(
            last["disk"]["cjk_side_table_bytes"] / last["disk"]["file_bytes"], 4  # type: ignore[index]
        ),
        "cjk_short_p95_ms": last["cjk_1_2_chars"]["p95_ms"],  # type: ignore[index]
        "cjk_long_p95_ms": last["cjk_3plus_chars"]["p95_ms"],  # type: ignore[index]
    }
    cjk_bytes = db.conn.execute(
        "SELECT coalesce(sum(length(CAST(content AS BLOB))), 0) FROM hm_messages_cjk"
    ).fetchone()[0]
    if cjk_bytes:
        out["cjk_cost"]["side_table_bytes_per_cjk_text_byte_estimate"] = round(  # type: ignore[index]
            last["disk"]["cjk_side_table_bytes"] / cjk_bytes, 2  # type: ignore[index]
        )
    db.close()
    print(json.dumps(out, indent=2))
    if tmpctx is not None:
        tmpctx.cleanup()


if __name__ == "__main__":
    main()
