"""Do two versions of the search code give the same answers? Record, then compare, every result.

A latency change to the query path must not change what a search returns. This script runs the
same queries as ``bench/sessions.py`` (its questions and two-word queries, same seeds) against a
built database and records, per query:

* ``search_messages`` (limit 20, relevance, context and snippets on): each row's id, session id,
  rank, snippet and context;
* ``discovery_rows`` (what ``session_search`` groups: 300 rows, roles user/assistant, hidden
  sources out): each row's id, session id, rank, role, timestamp and source;
* the whole ``session_search`` JSON of a discovery call, and of the same call with
  ``sort: newest`` and with ``role_filter: user``.

``--record FILE`` writes them (JSON); ``--against FILE`` records again and prints the number of
queries whose answers differ, per kind, with the first differences. Run it with the old code
(for example ``git archive main | tar -x -C /tmp/base`` and ``PYTHONPATH=/tmp/base/src``), then
with the new::

    python bench/search_identity.py --db <1M natural db> --corpus natural --queries 100 --record before.json
    python bench/search_identity.py --db <1M natural db> --corpus natural --queries 100 --against before.json

Prints one JSON object: ``{"corpus", "queries", "differences": {kind: count}, "examples": [...]}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from natural_corpus import NaturalCorpus  # noqa: E402

from hermes_memory.sessions.db import SessionDB  # noqa: E402
from hermes_memory.sessions.search import discovery_rows, session_search  # noqa: E402


def bench_queries(corpus: str, n: int, seed: int = 7) -> list[str]:
    """``n`` questions then ``n`` two-word queries of ``bench/sessions.py``'s ``corpus``."""
    if corpus == "natural":
        nat = NaturalCorpus(seed)
        return nat.questions(n, seed + 2) + nat.two_words(n, seed + 1)
    import sessions as bench_sessions  # bench/sessions.py (same folder)

    synth = bench_sessions.Corpus(seed, 0.02)
    q = bench_sessions.Corpus(seed + 1, 0.0)
    q.vocab = synth.vocab
    two = [q.two_word() for _ in range(max(n, 200))]
    questions = [q.question() for _ in range(max(n, 200))]
    return questions[:n] + two[:n]


def record(db: SessionDB, queries: list[str]) -> dict[str, list[Any]]:
    """Every answer of ``queries``, per kind (see the module docstring)."""
    out: dict[str, list[Any]] = {"search_messages": [], "discovery_rows": [], "session_search": [],
                                 "session_search_newest": [], "session_search_user": []}
    for q in queries:
        out["search_messages"].append([
            [r["id"], r["session_id"], r["rank"], r["snippet"], r["context"]] for r in db.search_messages(q, limit=20)])
        out["discovery_rows"].append([
            [r["id"], r["session_id"], r["rank"], r["role"], r["timestamp"], r["source"]] for r in discovery_rows(db, q)])
        out["session_search"].append(json.loads(session_search({"query": q}, db)))
        out["session_search_newest"].append(json.loads(session_search({"query": q, "sort": "newest"}, db)))
        out["session_search_user"].append(json.loads(session_search({"query": q, "role_filter": "user"}, db)))
    return out


def compare(old: dict[str, list[Any]], new: dict[str, list[Any]], queries: list[str]) -> dict[str, Any]:
    """``{"differences": {kind: queries differing}, "examples": [first 5 differences]}``."""
    diffs: dict[str, int] = {}
    examples: list[dict[str, Any]] = []
    for kind, answers in new.items():
        before = old.get(kind, [])
        diffs[kind] = sum(1 for i, a in enumerate(answers) if i >= len(before) or before[i] != a)
        for i, a in enumerate(answers):
            if (i >= len(before) or before[i] != a) and len(examples) < 5:
                examples.append({"kind": kind, "query": queries[i], "before": before[i] if i < len(before) else None,
                                 "after": a})
    return {"differences": diffs, "examples": examples}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="a database bench/sessions.py built")
    ap.add_argument("--corpus", choices=("natural", "synthetic"), required=True)
    ap.add_argument("--queries", type=int, default=100, help="questions and as many two-word queries")
    ap.add_argument("--record", help="write the answers to this file")
    ap.add_argument("--against", help="compare the answers with this recorded file")
    args = ap.parse_args()
    queries = bench_queries(args.corpus, args.queries)
    db = SessionDB(args.db)
    try:
        answers = record(db, queries)
    finally:
        db.close()
    out: dict[str, Any] = {"bench": "search_identity", "corpus": args.corpus, "queries": len(queries)}
    if args.record:
        Path(args.record).write_text(json.dumps({"queries": queries, "answers": answers}))
        out["recorded"] = args.record
    if args.against:
        old = json.loads(Path(args.against).read_text())
        if old["queries"] != queries:
            raise SystemExit("--against: that file recorded other queries")
        out.update(compare(old["answers"], answers, queries))
        out["examples"] = out["examples"][:2]
    print(json.dumps(out, indent=2, default=str))


if __name__ == "__main__":
    main()
