"""Copying a session into PostgreSQL as it was (``hermes-memory storage migrate``):
:meth:`CopyMethods.copy_session`, a mixin of :class:`~hermes_memory.sessions.pg.PgSessionDB`."""

from __future__ import annotations

from typing import Any

from hermes_memory.sessions.codec import JSON_COLUMNS, encode_content, encode_json, scrub
from hermes_memory.sessions.pg.connection import PgConn
from hermes_memory.sessions.pg.schema import HIDDEN_COLUMNS
from hermes_memory.sessions.storebase import StoreBase
from hermes_memory.sessions.titles import lineage_base, lineage_range, next_in_lineage


def unstorable_values(export: dict[str, Any]) -> int:
    """How many values of one :meth:`SessionDB.export_session` dict would hold a NUL character as
    stored (session columns, and each message's columns with content and JSON columns encoded as
    the codec stores them: a NUL inside JSON is written as the escape ``\\u0000`` and needs
    nothing). PostgreSQL ``text`` cannot hold NUL: :meth:`CopyMethods.copy_session` stores U+FFFD
    in its place (failure case C17). For a migration report; reads only."""

    def nul(value: Any) -> int:
        return int(isinstance(value, str) and "\x00" in value)

    total = sum(nul(v) for k, v in export.items() if k != "messages")
    for m in export.get("messages") or []:
        for k, v in m.items():
            total += nul(encode_content(v) if k == "content" else encode_json(v) if k in JSON_COLUMNS else v)
    return total


class CopyMethods(StoreBase):
    """``copy_session`` (a mixin over :class:`~hermes_memory.sessions.pg.connection.PgStore`)."""

    _copy_columns: dict[str, list[str]] | None = None

    def _table_columns(self, conn: PgConn) -> dict[str, list[str]]:
        if self._copy_columns is None:
            out: dict[str, list[str]] = {"sessions": [], "messages": []}
            for r in conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name IN ('sessions', 'messages') "
                "ORDER BY table_name, ordinal_position"
            ).fetchall():
                if r[1] not in HIDDEN_COLUMNS:
                    out[r[0]].append(r[1])
            self._copy_columns = out
        return self._copy_columns

    def copy_session(self, export: dict[str, Any]) -> tuple[int, int]:
        """Insert one session as :meth:`SessionDB.export_session` returns it (the session row's
        columns plus ``messages``, decoded); returns ``(sessions_inserted, messages_inserted)``.

        One transaction: all of it or nothing. Kept as they were: the session id, every session
        column (timestamps, counters, token counts, cost, end), the title, each message's columns
        (content and JSON columns re-encoded as :mod:`~hermes_memory.sessions.codec` stores
        them) and the messages' order.

        * **Message ids** are preserved when none of them is taken in this database (the identity
          sequence is then moved past them, so later appends never collide). When one is taken
          (another home's message copied here first), the session's messages get new ids from
          the sequence, in the same order.
        * **Parent links**: a parent already here is linked at once; a parent not copied yet is
          remembered and linked when it is copied (until then ``parent_session_id`` reads
          ``None``).
        * **Titles**: a title another session here already holds is stored with the next lineage
          number (``"title #2"``), as :meth:`get_next_title_in_lineage` gives it.
        * **Idempotent and resumable**: for a session already here nothing of the session row is
          changed; only messages beyond the ones it has are appended (the tail of a conversation
          that continued since the last copy), and its ``message_count``/``tool_call_count`` grow
          by them. A second call with the same export returns ``(0, 0)``.

        Text holding NUL characters is stored with U+FFFD in their place (:func:`unstorable_values`
        counts them beforehand). Keys of ``export`` that are not columns here are ignored. Raises ``KeyError`` when
        ``export`` has no ``id``, :class:`~hermes_memory.errors.SessionStoreError` on a database
        failure (nothing is written).
        """
        sid = str(export["id"])
        messages = sorted(export.get("messages") or [], key=lambda m: (m.get("id") is None, m.get("id") or 0))
        return self._execute_write(lambda conn: self._copy(conn, sid, export, messages))

    def _copy(self, conn: PgConn, sid: str, export: dict[str, Any], messages: list[dict[str, Any]]) -> tuple[int, int]:
        cols = self._table_columns(conn)
        row = conn.execute("SELECT 1 FROM sessions WHERE id = ? FOR UPDATE", (sid,)).fetchone()
        inserted = 0
        if row is None:
            self._insert_session(conn, sid, export, cols["sessions"])
            inserted = 1
            have = 0
        else:
            have = int(conn.execute("SELECT count(*) FROM messages WHERE session_id = ?", (sid,)).fetchone()[0])
        tail = messages[have:]
        if tail:
            self._insert_copied_messages(conn, sid, tail, cols["messages"])
            if not inserted:
                calls = sum(len(m["tool_calls"]) for m in tail
                            if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list))
                conn.execute(
                    "UPDATE sessions SET message_count = coalesce(message_count, 0) + ?, "
                    "tool_call_count = coalesce(tool_call_count, 0) + ? WHERE id = ?",
                    (len(tail), calls, sid),
                )
        return inserted, len(tail)

    def _insert_session(self, conn: PgConn, sid: str, export: dict[str, Any], columns: list[str]) -> None:
        values = {c: scrub(export[c]) for c in columns if c in export and export[c] is not None}
        values["id"] = sid
        values.setdefault("source", "cli")
        values.setdefault("started_at", 0.0)
        parent = values.pop("parent_session_id", None)
        if parent is not None and conn.execute("SELECT 1 FROM sessions WHERE id = ?", (parent,)).fetchone():
            values["parent_session_id"] = parent
        title = values.get("title")
        if title is not None and conn.execute("SELECT 1 FROM sessions WHERE title = ?", (title,)).fetchone():
            base = lineage_base(title)
            cond, params = lineage_range(base)
            taken = [t for (t,) in conn.execute(f"SELECT title FROM sessions WHERE {cond}", params).fetchall()]
            values["title"] = next_in_lineage(base, [*taken, title])
        names = list(values)
        conn.execute(
            f"INSERT INTO sessions ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            [values[n] for n in names],
        )
        if parent is not None and "parent_session_id" not in values:
            conn.execute("INSERT INTO hm_pending_parents (child_id, parent_id) VALUES (?, ?)", (sid, parent))
        conn.execute(
            "UPDATE sessions SET parent_session_id = ? WHERE id IN "
            "(SELECT child_id FROM hm_pending_parents WHERE parent_id = ?)",
            (sid, sid),
        )
        conn.execute("DELETE FROM hm_pending_parents WHERE parent_id = ?", (sid,))

    def _insert_copied_messages(
        self, conn: PgConn, sid: str, messages: list[dict[str, Any]], columns: list[str]
    ) -> None:
        ids = [int(m["id"]) for m in messages if m.get("id") is not None]
        keep_ids = len(ids) == len(messages) and len(set(ids)) == len(ids)
        if keep_ids:
            seq = conn.execute("SELECT pg_get_serial_sequence('messages', 'id')").fetchone()[0]
            # first move the sequence past the ids (never back), so appends from now on cannot take them
            conn.execute(
                f"SELECT setval('{seq}', ?) WHERE ? > "
                f"(SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM {seq})",
                (max(ids), max(ids)),
            )
            keep_ids = not conn.execute("SELECT 1 FROM messages WHERE id = ANY(?) LIMIT 1", (ids,)).fetchone()
        names = [c for c in columns if c != "id" and c != "session_id"]
        if keep_ids:
            names = ["id", *names]
        rows = []
        for m in messages:
            vals: dict[str, Any] = {}
            for c in names:
                v = m.get(c)
                if c == "content":
                    v = encode_content(v)
                elif c in JSON_COLUMNS:
                    v = encode_json(v)
                else:
                    v = scrub(v)
                vals[c] = v
            if vals.get("role") is None:
                vals["role"] = "user"
            if vals.get("timestamp") is None:
                vals["timestamp"] = 0.0
            for c in ("active", "compacted"):  # NOT NULL with a default: an old export may hold None
                if c in vals and vals[c] is None:
                    vals[c] = 1 if c == "active" else 0
            rows.append((sid, *[vals[c] for c in names]))
        marks = ", ".join("?" * (len(names) + 1))
        conn.executemany(f"INSERT INTO messages (session_id, {', '.join(names)}) VALUES ({marks})", rows)
