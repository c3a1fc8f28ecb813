"""SQLite storage of the Holographic provider: facts, entities, links, FTS5 and HRR banks.

Schema (docs/providers.md §4.4): ``facts`` (content UNIQUE, category, tags, trust_score, retrieval and
helpful counts, created/updated times, ``hrr_vector``), ``entities``, ``fact_entities``, the
``facts_fts`` FTS5 external-content index kept in sync by triggers, and ``memory_banks`` (one
HRR bundle per category).

Choices made where the reference is inconsistent or slow:

* FTS tokenizer: ``porter unicode61 remove_diacritics 2`` (word level, stemmed) everywhere; a
  query containing CJK text falls back to ``LIKE`` substring matching.
* Banks hold the complex running sum Σexp(i·v) of their facts' vectors, updated in O(dim) per
  add/update/remove instead of rebuilt in full (same bundle, ``angle`` of the sum).
* Times are UNIX seconds (float) in the database and ISO-8601 UTC strings in results.

One connection per resolved database path is shared inside the process (refcounted, guarded by
an ``RLock``), so a main agent and its subagents do not fight over the write lock.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_memory.plugins.holographic import hrr
from hermes_memory.plugins.holographic.connection import (  # noqa: F401 - moved there, re-exported
    _SCHEMA,
    _close,
    _open,
    immediate,
)
from hermes_memory.plugins.holographic.entities import extract_entities, merge_entity_names

logger = logging.getLogger(__name__)

CATEGORIES = ("user_pref", "project", "tool", "general")
DEFAULT_TRUST = 0.5
HELPFUL_DELTA = 0.05
"""Trust added by ``fact_feedback helpful`` (reference value)."""
UNHELPFUL_DELTA = -0.10
"""Trust added by ``fact_feedback unhelpful`` (reference value)."""
MAX_FACT_CHARS = 10_000
"""Longest fact content, in characters (ours; the reference has none). A fact is a short statement:
recalled facts go into every prompt, and entity extraction on megabyte texts takes minutes."""


STOPWORDS = frozenset("""
a an the and or but if then else of to in on at by for with about as from into over after before is are was
were be been being do does did done have has had having i me my we our you your he him his she her it its they
them their this that these those what which who whom whose when where why how not no yes so than too very can
could should would will shall may might must just also any all some each every there here up down out off again
further once only own same such both few more most other s t don doesn didn isn wasn aren weren won wouldn
""".split())
_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def iso(ts: float | None) -> str | None:
    """UNIX seconds → ISO-8601 UTC string (``None`` stays ``None``)."""
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


def query_terms(text: str) -> list[str]:
    """Search terms of ``text``: lowercased words, stopwords and 1-char tokens dropped, order kept, unique."""
    seen: list[str] = []
    for tok in _WORD.findall(text.lower()):
        if len(tok) < 2 or tok in STOPWORDS or tok in seen:
            continue
        seen.append(tok)
    return seen


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression: each term double-quoted (so no operator can leak), OR-joined."""
    return " OR ".join(f'"{t}"' for t in query_terms(text))


def _check_length(content: str) -> None:
    if len(content) > MAX_FACT_CHARS:
        raise ValueError(f"content is {len(content):,} chars; a fact holds at most {MAX_FACT_CHARS} chars: "
                         "store a short statement (split long notes into several facts)")


def _new_rowid(cur: sqlite3.Cursor) -> int:
    """The row id an ``INSERT`` on ``cur`` just created (``lastrowid`` is ``None`` only when the
    statement inserted nothing, which would be a defect here: raised as :class:`sqlite3.DatabaseError`)."""
    if cur.lastrowid is None:
        raise sqlite3.DatabaseError("INSERT created no row")
    return int(cur.lastrowid)


class FactStore:
    """The fact database at ``db_path``.

    Args:
        db_path: SQLite file (created with its folder).
        default_trust: trust of a new fact, in [0, 1].
        hrr_dim: HRR vector dimension (phases per vector).
        use_hrr: compute vectors and banks (needs numpy; forced off without it).

    Raises :class:`sqlite3.DatabaseError` if the file is not a usable database (the provider turns
    that into a loud, clear error instead of registering a broken store).
    """

    def __init__(self, db_path: str | os.PathLike[str], *, default_trust: float = DEFAULT_TRUST,
                 hrr_dim: int = hrr.DEFAULT_DIM, use_hrr: bool = True) -> None:
        self.path = str(Path(db_path).expanduser().resolve())
        self.default_trust = min(1.0, max(0.0, float(default_trust)))
        self.dim = int(hrr_dim)
        self.use_hrr = bool(use_hrr and hrr.HAVE_NUMPY)
        self.conn, self.lock = _open(self.path)
        self._closed = False
        self._snr_warned: set[str] = set()
        try:
            with self.lock:
                self.conn.executescript(_SCHEMA)
                self.conn.execute("SELECT count(*) FROM facts").fetchone()
            self._reencode_if_dim_changed()
        except sqlite3.DatabaseError:
            self.close()
            raise

    def _reencode_if_dim_changed(self) -> None:
        """Re-encode every fact and rebuild the banks when the store was written at another ``hrr_dim``.

        Vectors of another length are skipped by every HRR path (probe, reason, contradict), so
        without this a changed ``hrr_dim`` silently hid all earlier facts from structured recall.
        Costs one ``encode_fact`` per fact, once, in one transaction.
        """
        if not self.use_hrr:
            return
        with self.lock:
            stale = self.conn.execute(
                "SELECT count(*) FROM facts WHERE hrr_vector IS NULL OR length(hrr_vector) != ?",
                (4 + 4 * self.dim,)).fetchone()[0]
            stale_banks = self.conn.execute("SELECT count(*) FROM memory_banks WHERE dim != ?",
                                            (self.dim,)).fetchone()[0]
            if not stale and not stale_banks:
                return
            logger.warning("holographic store %s: re-encoding %d fact(s) for hrr_dim %d", self.path, stale, self.dim)
            with immediate(self.conn):
                for row in self.conn.execute("SELECT fact_id, content FROM facts").fetchall():
                    vec = hrr.encode_fact(row["content"], self.entities_of(row["fact_id"]), self.dim)
                    self.conn.execute("UPDATE facts SET hrr_vector=? WHERE fact_id=?",
                                      (hrr.to_bytes(vec), row["fact_id"]))
        self.rebuild_banks()

    def close(self) -> None:
        """Release this store's share of the connection (closed with the last user)."""
        if not self._closed:
            self._closed = True
            _close(self.path)

    # ------------------------------------------------------------------ rows
    @staticmethod
    def row_to_fact(row: sqlite3.Row, **extra: Any) -> dict[str, Any]:
        """A fact row as a JSON-ready dict (no vector bytes; times as ISO strings)."""
        fact = {
            "fact_id": row["fact_id"], "content": row["content"], "category": row["category"],
            "tags": row["tags"], "trust_score": round(float(row["trust_score"]), 4),
            "retrieval_count": row["retrieval_count"], "helpful_count": row["helpful_count"],
            "created_at": iso(row["created_at"]), "updated_at": iso(row["updated_at"]),
        }
        fact.update(extra)
        return fact

    def count(self) -> int:
        with self.lock:
            return int(self.conn.execute("SELECT count(*) FROM facts").fetchone()[0])

    def get(self, fact_id: int) -> sqlite3.Row | None:
        with self.lock:
            return self.conn.execute("SELECT * FROM facts WHERE fact_id=?", (int(fact_id),)).fetchone()

    def rows(self, fact_ids: Iterable[int]) -> list[sqlite3.Row]:
        ids = [int(i) for i in fact_ids]
        if not ids:
            return []
        out: list[sqlite3.Row] = []
        with self.lock:
            for i in range(0, len(ids), 500):
                chunk = ids[i:i + 500]
                out += self.conn.execute(f"SELECT * FROM facts WHERE fact_id IN ({','.join('?' * len(chunk))})",
                                         chunk).fetchall()
        return out

    # ------------------------------------------------------------------ entities
    def _resolve_entity(self, name: str, now: float) -> int:
        row = self.conn.execute("SELECT entity_id FROM entities WHERE name LIKE ? ESCAPE '\\' LIMIT 1",
                                (name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_"),)).fetchone()
        if row:
            return int(row[0])
        low = name.casefold()
        for r in self.conn.execute("SELECT entity_id, aliases FROM entities WHERE aliases != ''"):
            if low in {a.strip().casefold() for a in r["aliases"].split(",") if a.strip()}:
                return int(r["entity_id"])
        return _new_rowid(self.conn.execute("INSERT INTO entities(name, created_at) VALUES (?, ?)", (name, now)))

    def entities_of(self, fact_id: int) -> list[str]:
        with self.lock:
            return [r[0] for r in self.conn.execute(
                "SELECT e.name FROM entities e JOIN fact_entities fe ON fe.entity_id=e.entity_id WHERE fe.fact_id=? "
                "ORDER BY e.entity_id", (int(fact_id),))]

    def entity_ids(self, name: str) -> list[int]:
        """Ids of entities named ``name`` (case-insensitive) or listing it as an alias."""
        low = name.strip().casefold()
        with self.lock:
            ids = [r[0] for r in self.conn.execute("SELECT entity_id FROM entities WHERE name = ? COLLATE NOCASE",
                                                   (name.strip(),))]
            for r in self.conn.execute("SELECT entity_id, aliases FROM entities WHERE aliases != ''"):
                if low in {a.strip().casefold() for a in r["aliases"].split(",")}:
                    ids.append(r[0])
        return ids

    def facts_for_entity(self, name: str, limit: int | None = None) -> list[int]:
        """Ids of facts linked to entity ``name``; with ``limit``, the most recently updated ones only."""
        ids = self.entity_ids(name)
        if not ids:
            return []
        sql = (f"SELECT DISTINCT fe.fact_id FROM fact_entities fe JOIN facts f ON f.fact_id = fe.fact_id "
               f"WHERE fe.entity_id IN ({','.join('?' * len(ids))}) ORDER BY f.updated_at DESC, fe.fact_id DESC")
        args: list[Any] = list(ids)
        if limit is not None:
            sql += " LIMIT ?"
            args.append(int(limit))
        with self.lock:
            return [r[0] for r in self.conn.execute(sql, args)]

    def facts_for_all_entities(self, names: list[str], limit: int) -> list[int]:
        """Ids of facts linked to *every* entity in ``names`` (most recent first, at most ``limit``)."""
        groups = [self.entity_ids(n) for n in names]
        if not groups or any(not g for g in groups):
            return []
        sql = ("SELECT fe.fact_id FROM fact_entities fe JOIN facts f ON f.fact_id = fe.fact_id WHERE "
               + " AND ".join(f"EXISTS (SELECT 1 FROM fact_entities x WHERE x.fact_id = fe.fact_id AND x.entity_id IN "
                              f"({','.join('?' * len(g))}))" for g in groups)
               + " GROUP BY fe.fact_id ORDER BY max(f.updated_at) DESC LIMIT ?")
        with self.lock:
            return [r[0] for r in self.conn.execute(sql, [i for g in groups for i in g] + [int(limit)])]

    def bridges(self, a_ids: list[int], b_ids: list[int], exclude_entities: list[int],
                limit: int) -> list[tuple[int, int, str]]:
        """``(fact_a, fact_b, entity name)`` where a fact from ``a_ids`` and one from ``b_ids`` share an entity."""
        if not a_ids or not b_ids:
            return []
        ex = exclude_entities or [-1]
        sql = (f"SELECT fa.fact_id, fb.fact_id, e.name FROM fact_entities fa "
               f"JOIN fact_entities fb ON fb.entity_id = fa.entity_id AND fb.fact_id != fa.fact_id "
               f"JOIN entities e ON e.entity_id = fa.entity_id "
               f"WHERE fa.fact_id IN ({','.join('?' * len(a_ids))}) AND fb.fact_id IN ({','.join('?' * len(b_ids))}) "
               f"AND fa.entity_id NOT IN ({','.join('?' * len(ex))}) LIMIT ?")
        with self.lock:
            return [(r[0], r[1], r[2]) for r in self.conn.execute(sql, [*a_ids, *b_ids, *ex, int(limit)])]

    def add_alias(self, name: str, alias: str) -> None:
        with self.lock:
            ids = self.entity_ids(name)
            if ids:
                row = self.conn.execute("SELECT aliases FROM entities WHERE entity_id=?", (ids[0],)).fetchone()
                aliases = [a for a in row[0].split(",") if a] + [alias]
                self.conn.execute("UPDATE entities SET aliases=? WHERE entity_id=?", (",".join(aliases), ids[0]))

    def _link(self, fact_id: int, content: str, now: float, extra: Sequence[str] = ()) -> list[str]:
        """Re-link the fact: entities found in ``content``, then the ``extra`` names given by the caller."""
        names = merge_entity_names(extract_entities(content), extra)
        self.conn.execute("DELETE FROM fact_entities WHERE fact_id=?", (fact_id,))
        for name in names:
            eid = self._resolve_entity(name, now)
            self.conn.execute("INSERT OR IGNORE INTO fact_entities(fact_id, entity_id) VALUES (?, ?)", (fact_id, eid))
        return names

    # ------------------------------------------------------------------ banks
    def _bank_delta(self, category: str, add: Any = None, sub: Any = None, count_delta: int = 0) -> None:
        if not self.use_hrr:
            return
        import numpy as np

        name = f"cat:{category}"
        row = self.conn.execute("SELECT vector, fact_count FROM memory_banks WHERE bank_name=?", (name,)).fetchone()
        total = hrr.sum_from_bytes(row["vector"]) if row else None
        if total is None or len(total) != self.dim:
            total = np.zeros(self.dim, dtype=np.complex128)
        if add is not None:
            total = total + (np.cos(add) + 1j * np.sin(add))
        if sub is not None:
            total = total - (np.cos(sub) + 1j * np.sin(sub))
        n = max(0, (row["fact_count"] if row else 0) + count_delta)
        self.conn.execute(
            "INSERT INTO memory_banks(bank_name, vector, dim, fact_count, updated_at) VALUES (?,?,?,?,?) "
            "ON CONFLICT(bank_name) DO UPDATE SET vector=excluded.vector, dim=excluded.dim, "
            "fact_count=excluded.fact_count, updated_at=excluded.updated_at",
            (name, hrr.sum_to_bytes(total), self.dim, n, time.time()))
        if n and hrr.snr(self.dim, n) < 2.0 and name not in self._snr_warned:
            self._snr_warned.add(name)  # once per bank and store instance
            # sqrt(dim / n) < 2 <=> n > dim / 4; say the capacity, since a rounded ratio read "2.00 < 2".
            logger.warning("holographic bank %s holds %d facts, more than hrr_dim/4 = %d: HRR signal-to-noise "
                           "%.3f is below 2, so probe results get unreliable (raise hrr_dim, e.g. "
                           "`hermes-memory memory setup --provider holographic --set hrr_dim=%d --yes`)",
                           name, n, self.dim // 4, hrr.snr(self.dim, n), min(65536, max(self.dim * 2, 4 * n)))

    def bank(self, category: str) -> Any:
        """The category's bundle (phase vector), or ``None`` without numpy or facts."""
        if not self.use_hrr:
            return None
        import numpy as np

        with self.lock:
            row = self.conn.execute("SELECT vector, fact_count FROM memory_banks WHERE bank_name=?",
                                    (f"cat:{category}",)).fetchone()
        total = hrr.sum_from_bytes(row["vector"]) if row and row["fact_count"] else None
        return None if total is None else np.mod(np.angle(total), hrr.TWO_PI)

    def rebuild_banks(self) -> None:
        """Recompute every bank from the stored vectors (repairs float drift)."""
        if not self.use_hrr:
            return
        with self.lock:
            with immediate(self.conn):
                self.conn.execute("DELETE FROM memory_banks")
                for cat in [r[0] for r in self.conn.execute("SELECT DISTINCT category FROM facts")]:
                    for r in self.conn.execute("SELECT hrr_vector FROM facts WHERE category=? AND hrr_vector IS NOT NULL",
                                               (cat,)).fetchall():
                        self._bank_delta(cat, add=hrr.from_bytes(r[0], self.dim), count_delta=1)

    def vector(self, row: sqlite3.Row) -> Any:
        """The fact's HRR vector, or ``None`` (no numpy, no vector, or one of another ``hrr_dim``)."""
        if not self.use_hrr or not row["hrr_vector"]:
            return None
        vec = hrr.from_bytes(row["hrr_vector"], self.dim)
        return vec if vec is not None and len(vec) == self.dim else None

    # ------------------------------------------------------------------ writes
    def _insert(self, content: str, category: str, tags: str, trust: float | None, now: float,
                entities: Sequence[str] = ()) -> tuple[int, bool]:
        row = self.conn.execute("SELECT fact_id FROM facts WHERE content=?", (content,)).fetchone()
        if row:
            if entities:
                self._add_links(int(row[0]), entities, now)
            return int(row[0]), False
        cur = self.conn.execute(
            "INSERT INTO facts(content, category, tags, trust_score, created_at, updated_at) VALUES (?,?,?,?,?,?)",
            (content, category, tags, self.default_trust if trust is None else min(1.0, max(0.0, float(trust))),
             now, now))
        fact_id = _new_rowid(cur)
        names = self._link(fact_id, content, now, entities)
        if self.use_hrr:
            vec = hrr.encode_fact(content, names, self.dim)
            self.conn.execute("UPDATE facts SET hrr_vector=? WHERE fact_id=?", (hrr.to_bytes(vec), fact_id))
            self._bank_delta(category, add=vec, count_delta=1)
        return fact_id, True

    def link_entities(self, fact_id: int, entities: Sequence[str]) -> bool:
        """Link ``entities`` to the fact too (cleaned like extracted names); False for an unknown fact."""
        with self.lock:
            if self.get(fact_id) is None:
                return False
            with immediate(self.conn):
                self._add_links(int(fact_id), entities, time.time())
        return True

    def _add_links(self, fact_id: int, entities: Sequence[str], now: float) -> None:
        """Link ``entities`` to an existing fact as well; re-encode its vector when a link is new."""
        have = self.entities_of(fact_id)
        names = merge_entity_names(have, entities)
        if len(names) == len(have):
            return
        for name in names[len(have):]:
            eid = self._resolve_entity(name, now)
            self.conn.execute("INSERT OR IGNORE INTO fact_entities(fact_id, entity_id) VALUES (?, ?)", (fact_id, eid))
        row = self.get(fact_id)
        if self.use_hrr and row is not None:
            old = self.vector(row)
            vec = hrr.encode_fact(row["content"], names, self.dim)
            self.conn.execute("UPDATE facts SET hrr_vector=? WHERE fact_id=?", (hrr.to_bytes(vec), fact_id))
            self._bank_delta(row["category"], add=vec, sub=old, count_delta=0 if old is not None else 1)

    @staticmethod
    def _clean(content: str, category: str, tags: str | Iterable[str]) -> tuple[str, str, str]:
        content = (content or "").strip()
        if not content:
            raise ValueError("content is empty: give the fact text in 'content'")
        _check_length(content)
        category = (category or "general").strip() or "general"
        if not isinstance(tags, str):
            tags = ",".join(tags)
        tags = ",".join(t.strip() for t in tags.split(",") if t.strip())
        return content, category, tags

    def add_fact(self, content: str, category: str = "general", tags: str | Iterable[str] = "",
                 trust: float | None = None, entities: Sequence[str] = (),
                 learned_at: float | None = None) -> tuple[int, bool]:
        """Store a fact; return ``(fact_id, created)``. Duplicate content → existing id, row unchanged
        except that ``entities`` not yet linked to it are linked.

        ``entities``: names to link besides those extracted from ``content`` (each is cleaned like an
        extracted one; blank or over-long names are dropped). ``learned_at``: when the fact was
        learned (epoch seconds; default now), stored as its ``created_at``/``updated_at`` (an
        importer of older conversations passes their time; search matches dates in a query
        against it). Raises :class:`ValueError` for empty content or a ``learned_at`` that is not
        a finite number.
        """
        content, category, tags = self._clean(content, category, tags)
        at = time.time() if learned_at is None else float(learned_at)
        if at != at or at in (float("inf"), float("-inf")):
            raise ValueError(f"learned_at must be a finite epoch time in seconds, got {learned_at!r}")
        with self.lock:
            with immediate(self.conn):
                result = self._insert(content, category, tags, trust, at, entities)
        return result

    def add_facts(self, facts: Iterable[tuple[str, str, str]]) -> list[int]:
        """Bulk add ``(content, category, tags)`` triples in one transaction; returns the ids."""
        ids: list[int] = []
        with self.lock:
            with immediate(self.conn):
                now = time.time()
                for content, category, tags in facts:
                    c, cat, t = self._clean(content, category, tags)
                    ids.append(self._insert(c, cat, t, None, now)[0])
        return ids

    def update_fact(self, fact_id: int, *, content: str | None = None, category: str | None = None,
                    tags: str | None = None, trust_delta: float | None = None, trust: float | None = None) -> bool:
        """Partial update; trust is clamped to [0, 1]. New content re-links entities and re-encodes the vector.

        Returns False when the fact does not exist. Raises :class:`ValueError` for empty content or
        content identical to another fact's.
        """
        with self.lock:
            row = self.get(fact_id)
            if row is None:
                return False
            new_content = row["content"] if content is None else content.strip()
            if not new_content:
                raise ValueError("content is empty: give the new fact text in 'content'")
            _check_length(new_content)
            new_cat = row["category"] if category is None else (category.strip() or "general")
            new_tags = row["tags"] if tags is None else self._clean("x", "general", tags)[2]
            new_trust = float(row["trust_score"]) if trust is None else float(trust)
            if trust_delta is not None:
                new_trust += float(trust_delta)
            new_trust = min(1.0, max(0.0, new_trust))
            now = time.time()
            with immediate(self.conn):
                if new_content != row["content"]:
                    clash = self.conn.execute("SELECT fact_id FROM facts WHERE content=? AND fact_id!=?",
                                              (new_content, fact_id)).fetchone()
                    if clash:
                        raise ValueError(f"another fact (id {clash[0]}) already has this content; remove one of them")
                self.conn.execute("UPDATE facts SET content=?, category=?, tags=?, trust_score=?, updated_at=? "
                                  "WHERE fact_id=?", (new_content, new_cat, new_tags, new_trust, now, fact_id))
                old_vec = self.vector(row)
                if new_content != row["content"] or new_cat != row["category"]:
                    names = self._link(fact_id, new_content, now) if new_content != row["content"] \
                        else self.entities_of(fact_id)
                    if self.use_hrr:
                        vec = hrr.encode_fact(new_content, names, self.dim)
                        self.conn.execute("UPDATE facts SET hrr_vector=? WHERE fact_id=?", (hrr.to_bytes(vec), fact_id))
                        self._bank_delta(row["category"], sub=old_vec, count_delta=-1 if old_vec is not None else 0)
                        self._bank_delta(new_cat, add=vec, count_delta=1)
        return True

    def remove_fact(self, fact_id: int) -> bool:
        """Delete a fact (its entity links go with it). False when it does not exist."""
        with self.lock:
            row = self.get(fact_id)
            if row is None:
                return False
            with immediate(self.conn):
                self.conn.execute("DELETE FROM facts WHERE fact_id=?", (int(fact_id),))
                vec = self.vector(row)
                if vec is not None:
                    self._bank_delta(row["category"], sub=vec, count_delta=-1)
        return True

    def feedback(self, fact_id: int, helpful: bool) -> dict[str, Any] | None:
        """Apply ``+0.05`` (helpful, also ``helpful_count += 1``) or ``−0.10`` trust, clamped to [0, 1].

        Returns ``{fact_id, old_trust, new_trust, helpful_count}`` or ``None`` for an unknown fact.
        """
        with self.lock:
            row = self.get(fact_id)
            if row is None:
                return None
            old = float(row["trust_score"])
            new = min(1.0, max(0.0, old + (HELPFUL_DELTA if helpful else UNHELPFUL_DELTA)))
            count = row["helpful_count"] + (1 if helpful else 0)
            self.conn.execute("UPDATE facts SET trust_score=?, helpful_count=?, updated_at=? WHERE fact_id=?",
                              (new, count, time.time(), int(fact_id)))
        return {"fact_id": int(fact_id), "old_trust": round(old, 4), "new_trust": round(new, 4), "helpful_count": count}

    def touch(self, fact_ids: Iterable[int]) -> None:
        """``retrieval_count += 1`` for returned facts."""
        ids = [int(i) for i in fact_ids]
        if ids:
            with self.lock:
                self.conn.execute(f"UPDATE facts SET retrieval_count = retrieval_count + 1 "
                                  f"WHERE fact_id IN ({','.join('?' * len(ids))})", ids)

    # ------------------------------------------------------------------ reads
    def list_facts(self, *, category: str | None = None, min_trust: float = 0.0, limit: int = 10) -> list[sqlite3.Row]:
        sql = "SELECT * FROM facts WHERE trust_score >= ?"
        args: list[Any] = [min_trust]
        if category:
            sql += " AND category = ?"
            args.append(category)
        sql += " ORDER BY updated_at DESC, fact_id DESC LIMIT ?"
        args.append(max(1, int(limit)))
        with self.lock:
            return self.conn.execute(sql, args).fetchall()

    def fts(self, query: str, *, min_trust: float = 0.0, limit: int = 10,
            category: str | None = None) -> list[tuple[sqlite3.Row, float]]:
        """Keyword candidates ``[(row, bm25 rank)]`` (rank: lower is better). Never raises on odd queries.

        CJK text uses ``LIKE`` substring matching (rank 0) because the word tokenizer cannot split it.
        """
        extra, args = "", []
        if category:
            extra, args = " AND f.category = ?", [category]
        with self.lock:
            if _CJK.search(query):
                pieces = [p for p in re.split(r"\s+", query.strip()) if p][:8]
                if not pieces:
                    return []
                cond = " OR ".join("f.content LIKE ? ESCAPE '\\'" for _ in pieces)
                like = ["%" + p.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for p in pieces]
                rows = self.conn.execute(f"SELECT f.* FROM facts f WHERE ({cond}) AND f.trust_score >= ?{extra} "
                                         f"ORDER BY f.trust_score DESC LIMIT ?", [*like, min_trust, *args, limit]).fetchall()
                return [(r, 0.0) for r in rows]
            match = fts_query(query)
            if not match:
                return []
            limit = max(1, int(limit))
            cap = max(limit * 4, 50)
            try:
                # fast path: rank in the FTS index alone, then fetch and filter the few full rows
                ranked = self.conn.execute("SELECT rowid, bm25(facts_fts) AS r FROM facts_fts WHERE facts_fts MATCH ? "
                                           "ORDER BY r LIMIT ?", (match, cap)).fetchall()
                by_id = {r["fact_id"]: r for r in self.rows(r[0] for r in ranked)}
                hits = [(by_id[i], float(rank)) for i, rank in ranked if i in by_id
                        and by_id[i]["trust_score"] >= min_trust and (not category or by_id[i]["category"] == category)]
                if len(hits) >= limit or len(ranked) < cap:
                    return hits[:limit]
                # many low-trust / other-category matches: filter inside SQLite
                ranked = self.conn.execute(
                    f"SELECT f.fact_id, bm25(facts_fts) AS r FROM facts_fts JOIN facts f ON f.fact_id = facts_fts.rowid "
                    f"WHERE facts_fts MATCH ? AND f.trust_score >= ?{extra} ORDER BY r LIMIT ?",
                    [match, min_trust, *args, limit]).fetchall()
            except sqlite3.OperationalError as exc:
                logger.debug("FTS query %r failed: %s", match, exc)
                return []
            by_id = {r["fact_id"]: r for r in self.rows(r[0] for r in ranked)}
        return [(by_id[i], float(rank)) for i, rank in ranked if i in by_id]
