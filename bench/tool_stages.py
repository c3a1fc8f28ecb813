"""Where a ``session_search`` tool call spends its CPU, stage by stage, beside a bare question search.

A tool call (``session_search({"query": q})``) does more than ``search_messages(q, limit=20)``:
the search under discovery's filters (roles, hidden sources) for 300 rows, the title search, the
lineages, each result's session columns, snippets, the window and bookends of the top result and
the JSON. This script wraps each of those steps (and the steps of the search itself) in a timer
of this thread's CPU (``time.thread_time``) and runs ``bench/sessions.py``'s questions (and
two-word queries) on a built database, after a warm-up pass with every query (each word's
document frequency cached: the warm case a long-running agent sees).

    python bench/tool_stages.py --db <1M natural db> --corpus natural --queries 100
    PYTHONPATH=<old tree>/src python bench/tool_stages.py ...   # the same stages of an older tree

Prints one JSON object: ``latency``: per kind (``session_search`` tool calls on the questions,
``questions`` and ``two_word`` through ``search_messages`` limit 20) CPU and wall p50/p95 in ms,
the kinds interleaved query by query so they share the machine's load; ``stages``: per kind,
each timed step's mean CPU ms per call, inclusive (``incl``: with the steps it calls) and
exclusive (``self``), and how many times per call it ran; ``unattributed_ms``: the mean CPU of a
call outside every timed step.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_identity import bench_queries  # noqa: E402

from hermes_memory.sessions import (  # noqa: E402
    feedback_sql,
    lineage,
    message_search,
    records,
    search,
    signals,
    term_stats,
    titles,
)
from hermes_memory.sessions.db import SessionDB  # noqa: E402

STAGES: list[tuple[Any, str, str]] = [
    (search, "discovery_rows", "search (discovery rows)"),
    (search, "_discovery_read", "search (discovery rows as read)"),
    (message_search.MessageSearchMethods, "_ranked", "search: ranked ids"),
    (term_stats.TermStats, "cap_terms", "search: term statistics (cap_terms)"),
    (message_search, "filtered_head", "search: filtered head (bm25 + filter check)"),
    (term_stats, "read_candidates", "search: candidate rows read"),
    (term_stats.TermStats, "score_dropped", "search: dropped-word check"),
    (signals, "gather", "search: rank signals"),
    (message_search, "merge_hits", "search: rerank"),
    (feedback_sql, "run", "search: feedback pass"),
    (message_search.MessageSearchMethods, "_materialise", "search: result rows"),
    (message_search.MessageSearchMethods, "_rows_as_read", "search: result rows (as read)"),
    (message_search.MessageSearchMethods, "_contexts", "search: result contexts"),
    (search, "demote_automated", "demote automated"),
    (search, "_title_hits", "title search"),
    (lineage.LineageMethods, "get_lineages", "lineages"),
    (search, "_session_of", "result session columns"),
    (message_search.MessageSearchMethods, "snippets_for", "snippets"),
    (records.RecordMethods, "get_messages_window", "top result window"),
    (lineage.LineageMethods, "get_bookends", "top result bookends"),
    (search, "_msg", "message dicts"),
    (search, "_ok", "result JSON"),
    (search, "search_note", "search note"),
    (titles.TitleSearchMethods, "search_titles", "title search: search_titles"),
]
"""(owner, attribute, label) of each timed step. Steps are looked up where their callers look
them up (a module global or a method), so the wrapper is what runs."""


class Timer:
    """Inclusive and exclusive thread CPU per label, per kind of call, with nesting."""

    def __init__(self) -> None:
        self.kind = ""
        self.incl: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.excl: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.calls: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.stack: list[list[float]] = []  # [start, time spent in timed children]

    def wrap(self, fn: Callable[..., Any], label: str) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*a: Any, **kw: Any) -> Any:
            if not self.kind:
                return fn(*a, **kw)
            frame = [time.thread_time(), 0.0]
            self.stack.append(frame)
            try:
                return fn(*a, **kw)
            finally:
                spent = time.thread_time() - frame[0]
                self.stack.pop()
                self.incl[self.kind][label] += spent
                self.excl[self.kind][label] += spent - frame[1]
                self.calls[self.kind][label] += 1
                if self.stack:
                    self.stack[-1][1] += spent
        return timed


def install(timer: Timer) -> None:
    """Replace every step of :data:`STAGES` by its timed wrapper (for this process)."""
    for owner, attr, label in STAGES:
        fn = owner.__dict__.get(attr)
        if fn is None:  # an older tree (PYTHONPATH=<its src>) without this step
            continue
        if isinstance(fn, staticmethod):
            setattr(owner, attr, staticmethod(timer.wrap(fn.__func__, label)))
        else:
            setattr(owner, attr, timer.wrap(fn, label))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="a database bench/sessions.py built")
    ap.add_argument("--corpus", choices=("natural", "synthetic"), required=True)
    ap.add_argument("--queries", type=int, default=100, help="questions and as many two-word queries")
    ap.add_argument("--no-stages", action="store_true", help="time whole calls only (no wrappers)")
    args = ap.parse_args()
    from hermes_memory.sessions.search import session_search

    n = args.queries
    qs = bench_queries(args.corpus, n)
    timer = Timer()
    if not args.no_stages:
        install(timer)
    db = SessionDB(args.db)
    calls: dict[str, Callable[[str], Any]] = {
        "session_search": lambda q: session_search({"query": q}, db),
        "questions": lambda q: db.search_messages(q, limit=20),
        "two_word": lambda q: db.search_messages(q, limit=20),
    }
    batches = {"session_search": qs[:n], "questions": qs[:n], "two_word": qs[n:]}
    for kind, batch in batches.items():  # warm-up: every word's frequency cached, pages read once
        for q in batch:
            calls[kind](q)
    cpu: dict[str, list[float]] = {k: [] for k in calls}
    wall: dict[str, list[float]] = {k: [] for k in calls}
    for i in range(n):
        for kind in calls:
            q = batches[kind][i]
            timer.kind = kind
            t0, c0 = time.perf_counter(), time.thread_time()
            calls[kind](q)
            cpu[kind].append((time.thread_time() - c0) * 1000)
            wall[kind].append((time.perf_counter() - t0) * 1000)
            timer.kind = ""
    db.close()

    def pct(xs: list[float]) -> dict[str, float]:
        s = sorted(xs)
        return {"p50": round(statistics.median(s), 2), "p95": round(s[int(0.95 * (len(s) - 1))], 2),
                "mean": round(statistics.fmean(s), 2)}

    out: dict[str, Any] = {"bench": "tool_stages", "corpus": args.corpus, "queries": n, "db": args.db,
                           "latency": {k: {"cpu": pct(cpu[k]), "wall": pct(wall[k])} for k in calls}}
    if not args.no_stages:
        out["stages"] = {}
        out["unattributed_ms"] = {}
        for kind in calls:
            rows = sorted(timer.incl[kind], key=lambda lb: -timer.incl[kind][lb])
            out["stages"][kind] = {lb: {"incl": round(timer.incl[kind][lb] * 1000 / n, 2),
                                        "self": round(timer.excl[kind][lb] * 1000 / n, 2),
                                        "per_call": round(timer.calls[kind][lb] / n, 2)} for lb in rows}
            top = sum(timer.excl[kind].values()) * 1000 / n
            out["unattributed_ms"][kind] = round(statistics.fmean(cpu[kind]) - top, 2)
    out["load_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
