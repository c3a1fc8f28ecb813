"""Dashboard latency on a home with 100k messages: the session list and a search, over real HTTP.

Builds a temporary home (``--messages`` messages in sessions of 50, synthetic Zipf text from a
fixed seed, 4 sources, a few users and titles), starts ``hermes-memory serve --transport http``
on 127.0.0.1 (the dashboard mounted at ``/``), and times full page loads with ``httpx`` after one
warm-up request each: the first and a deep page of the session list, the list filtered by source,
by title and by date range, and the search page (``session_search`` discovery, highlighted
snippets) for keyword queries and questions, plus one transcript page.

Prints one JSON object: per request kind ``median_ms``, ``p95_ms``, ``max_ms`` over ``--repeats``
requests, the size of the home, and ``goal`` (every median under 1,000 ms: issue 17).

Usage: ``python bench/dashboard.py [--messages 100000] [--repeats 15]``. No network.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from hermes_memory.sessions.db import SessionDB

SOURCES = ("cli", "telegram", "mcp", "claude_code")
USERS = (None, "alice", "bob")
SESSION_SIZE = 50


def vocabulary(rng: random.Random, n: int = 20_000) -> list[str]:
    syll = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "su", "do", "ga", "hi", "ba", "te", "ri"]
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(syll) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def build(home: Path, n_messages: int, seed: int = 7) -> dict[str, int]:
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    weights = [1.0 / (r + 1) ** 1.05 for r in range(len(vocab))]
    now = time.time()
    n_sessions = max(1, n_messages // SESSION_SIZE)
    db = SessionDB(home / "state.db")
    try:
        for i in range(n_sessions):
            started = now - (n_sessions - i) * 1800.0
            sid = db.create_session(source=SOURCES[i % len(SOURCES)], user_id=USERS[i % len(USERS)],
                                    title=f"Session {i}: {' '.join(rng.choices(vocab[:3000], k=3))}",
                                    started_at=started, model="bench-model")
            batch = []
            for j in range(SESSION_SIZE):
                words = rng.choices(vocab, weights=weights, k=rng.randint(8, 60))
                batch.append({"role": "user" if j % 2 == 0 else "assistant", "content": " ".join(words),
                              "timestamp": started + j * 10.0})
            db.append_messages(sid, batch)
            db.update_token_counts(sid, input_tokens=rng.randint(1_000, 50_000), output_tokens=rng.randint(100, 3_000),
                                   cache_read_tokens=rng.randint(0, 900))
        return {"sessions": db.session_count(), "messages": db.message_count(),
                "state_db_bytes": (home / "state.db").stat().st_size}
    finally:
        db.close()


def start_server(home: Path) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, "-m", "hermes_memory", "--home", str(home), "serve", "--transport", "http",
            "--port", "0", "--json"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "HERMES_HOME": str(home)})
    assert proc.stdout is not None
    text = ""
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"server exited (rc={proc.wait()})")
        text += line
        try:
            return proc, json.loads(text)["dashboard"]
        except ValueError:
            continue


def timed(client: httpx.Client, url: str, repeats: int) -> dict[str, float]:
    r = client.get(url)  # warm-up (and a check that the page renders)
    if r.status_code != 200:
        raise SystemExit(f"GET {url} -> {r.status_code}: {r.text[:300]}")
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = client.get(url)
        times.append((time.perf_counter() - t0) * 1000.0)
        assert r.status_code == 200, url
    times.sort()
    return {"median_ms": round(statistics.median(times), 1),
            "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))], 1),
            "max_ms": round(times[-1], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        t0 = time.perf_counter()
        size = build(home, args.messages)
        build_s = time.perf_counter() - t0
        proc, base = start_server(home)
        try:
            with httpx.Client(timeout=60) as c:
                first = c.get(base + "api/sessions").json()["sessions"][0]["id"]
                day = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 10 * 86400))
                vocab = vocabulary(random.Random(7))
                kinds = {
                    "session_list_first_page": "sessions",
                    "session_list_page_20": "sessions?page=20",
                    "session_list_by_source": "sessions?source=telegram",
                    "session_list_by_title": "sessions?title=Session+17",
                    "session_list_by_dates": f"sessions?since={day}&until={day}",
                    "search_two_words": f"sessions/search?q={vocab[500]}+{vocab[4000]}",
                    "search_question": f"sessions/search?q=what+did+we+decide+about+{vocab[1200]}+and+{vocab[9000]}",
                    "search_common_word": f"sessions/search?q={vocab[0]}",
                    "transcript_page": f"sessions/{first}",
                }
                results = {k: timed(c, base + url, args.repeats) for k, url in kinds.items()}
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    worst = max(r["median_ms"] for r in results.values())
    print(json.dumps({"home": size, "build_s": round(build_s, 1), "repeats": args.repeats, "requests": results,
                      "worst_median_ms": worst, "goal": "every median < 1000 ms", "meets_goal": worst < 1000.0},
                     indent=2))


if __name__ == "__main__":
    main()
