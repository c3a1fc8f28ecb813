"""The previous turn's text indexed with each turn on PostgreSQL (schema version 3), as on SQLite
(:mod:`hermes_memory.sessions.hmcontext`, docs/reference.md §6).

* ``messages.hm_context``: a ``tsvector`` (weight D, ranked at :data:`hermes_memory.sessions.hmcontext.BEFORE_WEIGHT`)
  of the previous turn's first :data:`~hermes_memory.sessions.hmcontext.NEIGHBOUR_CHARS` characters
  in the session, in ``(timestamp, id)`` order; NULL for tool rows, empty rows and first turns.
  A GIN index ``hm_messages_context`` serves matches in it.
* Kept by triggers: ``hm_messages_context_bi`` (BEFORE INSERT or UPDATE of content, role,
  session, time: the row's own context; on an insert before a later turn of the session, that
  turn's too) and ``hm_messages_context_next`` (AFTER DELETE or such an UPDATE: the turn right
  after the row's old and new place gets its context again, so a deleted turn's text leaves the
  index). An append at the end of a session costs one trigger call with an index probe for the
  previous turn and one for a later turn (none), plus the second GIN index's update. Measured
  with bench/storage.py (durable commits, 200 messages per writer, three alternating runs on a
  2-core machine shared with other work): 4 writer processes 316 / 350 / 408 -> 216 / 243 / 210
  messages/s, 1 writer 173 / 223 / 176 -> 134 / 90 / 107 (the first new run with a second,
  AFTER INSERT trigger, since folded into this one).
* **Existing rows** get their context after the migration, in bounded batches
  (:func:`backfill`, :data:`BACKFILL_CHUNK` rows per transaction, ``hm_meta.context_next_id``
  marks the place; a process killed mid-way resumes there). Until a row is reached, search finds
  it by its own text only, as before; writers are never held up for more than one batch.

:data:`MIGRATION_SQL` is migration 3 of :func:`hermes_memory.sessions.pg.schema.migrate`.
"""

from __future__ import annotations

import logging
from typing import Any

from hermes_memory.sessions import hmcontext
from hermes_memory.sessions.pg.search_schema import NORMALISE, TS_CONFIG

logger = logging.getLogger(__name__)

BACKFILL_CHUNK = 2_000
"""Rows given their context per transaction while existing rows are filled in."""
COLUMN = "hm_context"
_TURN = "{p}.role IN ('user', 'assistant') AND length({p}.content) > 0"

MIGRATION_NAME = "previous turn's text indexed with each turn (hm_context tsvector, GIN, triggers)"
MIGRATION_SQL = f"""
ALTER TABLE messages ADD COLUMN {COLUMN} tsvector;
CREATE INDEX hm_messages_context ON messages USING gin ({COLUMN});
CREATE TABLE IF NOT EXISTS hm_meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO hm_meta (key, value) VALUES ('context_next_id', '0'),
    ('context_through', (SELECT coalesce(max(id), 0)::text FROM messages))
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;

CREATE FUNCTION hm_context_of(p_session text, p_ts double precision, p_id bigint) RETURNS tsvector
LANGUAGE sql STABLE AS $$
  SELECT setweight(to_tsvector('{TS_CONFIG}'::regconfig,
             regexp_replace(left(n.content, {hmcontext.NEIGHBOUR_CHARS}), {NORMALISE}, ' ', 'g')), 'D')
  FROM messages n
  WHERE n.session_id = p_session AND n.timestamp <= p_ts AND (n.timestamp < p_ts OR n.id < p_id)
    AND n.id <> p_id AND {_TURN.format(p='n')}
  ORDER BY n.timestamp DESC, n.id DESC LIMIT 1
$$;

CREATE FUNCTION hm_next_turn(p_session text, p_ts double precision, p_id bigint) RETURNS bigint
LANGUAGE sql STABLE AS $$
  SELECT n.id FROM messages n
  WHERE n.session_id = p_session AND n.timestamp >= p_ts AND (n.timestamp > p_ts OR n.id > p_id)
    AND n.id <> p_id AND {_TURN.format(p='n')}
  ORDER BY n.timestamp ASC, n.id ASC LIMIT 1
$$;

CREATE FUNCTION hm_messages_context_bi() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE later bigint;
BEGIN
  NEW.{COLUMN} := CASE WHEN {_TURN.format(p='NEW')} THEN hm_context_of(NEW.session_id, NEW.timestamp, NEW.id) END;
  IF TG_OP = 'INSERT' AND {_TURN.format(p='NEW')} THEN
    -- a turn inserted before a later one (not an append): that one now has this turn before it
    later := hm_next_turn(NEW.session_id, NEW.timestamp, NEW.id);
    IF later IS NOT NULL THEN
      UPDATE messages SET {COLUMN} = setweight(to_tsvector('{TS_CONFIG}'::regconfig,
          regexp_replace(left(NEW.content, {hmcontext.NEIGHBOUR_CHARS}), {NORMALISE}, ' ', 'g')), 'D')
      WHERE id = later;
    END IF;
  END IF;
  RETURN NEW;
END $$;

CREATE FUNCTION hm_messages_context_next() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    UPDATE messages SET {COLUMN} = hm_context_of(session_id, timestamp, id)
    WHERE id = hm_next_turn(NEW.session_id, NEW.timestamp, NEW.id);
  END IF;
  UPDATE messages SET {COLUMN} = hm_context_of(session_id, timestamp, id)
  WHERE id = hm_next_turn(OLD.session_id, OLD.timestamp, OLD.id);
  RETURN NULL;
END $$;

CREATE TRIGGER hm_messages_context_bi BEFORE INSERT OR UPDATE OF content, role, session_id, timestamp
  ON messages FOR EACH ROW EXECUTE FUNCTION hm_messages_context_bi();
CREATE TRIGGER hm_messages_context_next AFTER DELETE OR UPDATE OF content, role, session_id, timestamp
  ON messages FOR EACH ROW EXECUTE FUNCTION hm_messages_context_next();
"""
"""Migration 3 (see the module docstring). The triggers' own ``UPDATE`` sets only ``hm_context``,
which fires neither trigger again."""


def backfill_step(conn: Any) -> dict[str, Any]:
    """Give the next :data:`BACKFILL_CHUNK` existing rows their context, in one transaction on
    ``conn`` (a psycopg connection in autocommit mode). Returns ``{"filled": int, "pending": bool}``."""
    with conn.transaction():
        if conn.execute("SELECT to_regclass('hm_meta')").fetchone()[0] is None:  # before migration 3
            return {"filled": 0, "pending": False}
        marks = dict(conn.execute("SELECT key, value FROM hm_meta WHERE key IN ('context_next_id', 'context_through') "
                                  "FOR UPDATE").fetchall())
        if "context_next_id" not in marks:
            return {"filled": 0, "pending": False}
        ids = [r[0] for r in conn.execute("SELECT id FROM messages WHERE id >= %s AND id <= %s ORDER BY id LIMIT %s",
                                          (int(marks["context_next_id"]), int(marks["context_through"]),
                                           BACKFILL_CHUNK)).fetchall()]
        if ids:
            conn.execute(f"UPDATE messages m SET {COLUMN} = hm_context_of(m.session_id, m.timestamp, m.id) "
                         f"WHERE m.id = ANY(%s) AND {_TURN.format(p='m')}", (ids,))
        if len(ids) < BACKFILL_CHUNK:
            conn.execute("DELETE FROM hm_meta WHERE key IN ('context_next_id', 'context_through')")
            return {"filled": len(ids), "pending": False}
        conn.execute("UPDATE hm_meta SET value = %s WHERE key = 'context_next_id'", (str(ids[-1] + 1),))
        return {"filled": len(ids), "pending": True}


def backfill(conn: Any) -> int:
    """Run :func:`backfill_step` until no existing row lacks its context; returns the rows done.
    Other connections write between steps (each step is its own transaction)."""
    done = 0
    while True:
        step = backfill_step(conn)
        done += step["filled"]
        if not step["pending"]:
            break
    if done:
        logger.info("hermes-memory: previous turns' text indexed for %d existing messages", done)
    return done
