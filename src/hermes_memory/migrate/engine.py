"""Copy a SQLite home into PostgreSQL: sessions, messages and the curated memory files.

* **Lossless**: every session row and message is copied with its ids, timestamps, order and
  parent links (``PgSessionDB.copy_session``); every memory file's entries in file order, as they
  are (entries over a limit or caught by the threat scan included: they are the user's data, and
  the store shows them the same way the file backend does).
* **Idempotent and resumable**: ``copy_session`` inserts what is missing and nothing twice, one
  transaction per session; memory sets are imported in one transaction each. A run killed at any
  point leaves whole sessions behind; running again completes the copy, and a run over a complete
  copy adds nothing.
* **Verified**: at the end every source session is looked up in the target and its messages
  counted, and every memory set re-read; any difference is a problem in the report.
* **Read-only on the source** (:class:`~hermes_memory.migrate.source.SqliteHomeSource`).

See docs/scaling.md §3.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hermes_memory.config import HermesConfig
from hermes_memory.errors import HermesMemoryError
from hermes_memory.home import HermesHome
from hermes_memory.migrate.source import MemorySet, SqliteHomeSource
from hermes_memory.storage import Storage
from hermes_memory.wording import count

Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: phase ``"sessions"`` counts messages (sessions without any
count as one), phase ``"memory"`` counts memory files."""


class MigrationError(HermesMemoryError):
    """The source could not be read or the target refused a write; the message says which."""


@dataclass
class MigrationReport:
    """What a run found, copied and verified. Counts are rows.

    ``sessions_source``/``messages_source``: in ``state.db``. ``sessions_added``/``messages_added``:
    inserted by this run (0 on a rerun over a complete copy). ``sessions_target``/``messages_target``:
    of the source's sessions, how many the target holds at the end, and their messages (the target
    may hold more sessions: other hosts'). ``values_replaced``: text values holding a NUL character,
    which PostgreSQL cannot store, stored with U+FFFD in its place (failure case C17; counted over
    every session read, so a rerun counts them again). ``memory``: one dict per file ``{"target", "user_id",
    "file", "entries_source", "entries_target", "added"}``. ``problems``: what did not verify.
    """

    target: str
    sessions_source: int = 0
    messages_source: int = 0
    sessions_added: int = 0
    messages_added: int = 0
    sessions_target: int = 0
    messages_target: int = 0
    values_replaced: int = 0
    memory: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every count and every memory set verified."""
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "ok": self.ok, "sessions_source": self.sessions_source,
                "messages_source": self.messages_source, "sessions_added": self.sessions_added,
                "messages_added": self.messages_added, "sessions_target": self.sessions_target,
                "messages_target": self.messages_target,
                "values_replaced": self.values_replaced, "memory": self.memory, "problems": self.problems}


def migrate_home(home: HermesHome, config: HermesConfig, target: Storage, *,
                 progress: Progress | None = None) -> MigrationReport:
    """Copy ``home``'s SQLite data into the PostgreSQL ``target`` and verify it (module docstring).

    ``config`` gives the memory limits the target store is opened with (they do not filter what
    is copied). Returns the :class:`MigrationReport`; raises :class:`MigrationError` when the source
    cannot be read, and lets :class:`~hermes_memory.errors.SessionStoreError` /
    :class:`~hermes_memory.errors.ConfigError` of the target through (nothing half-written stays:
    each session and memory set is one transaction).
    """
    from hermes_memory.sessions.factory import open_session_db
    from hermes_memory.sessions.pg import PgSessionDB, unstorable_values

    if not target.is_postgres:
        raise MigrationError("storage migrate copies into PostgreSQL: pass --to postgresql://...")
    report = MigrationReport(target=target.display)
    tick = progress or (lambda _phase, _done, _total: None)
    with SqliteHomeSource(home) as source:
        report.sessions_source, report.messages_source = source.counts()
        per_session = source.message_counts()
        ids = source.session_ids()
        sets = source.memory_sets()
        unreadable = [s for s in sets if s.error]
        if unreadable:
            raise MigrationError("cannot read " + "; ".join(f"{s.path}: {s.error}" for s in unreadable)
                                 + ". Nothing was copied; fix the file and run again.")
        with open_session_db(home, config, storage=target) as db:
            if not isinstance(db, PgSessionDB):  # is_postgres above: the factory opened PostgreSQL
                raise MigrationError(f"{target.display} did not open as a PostgreSQL store; nothing was copied.")
            total = sum(max(1, per_session.get(sid, 0)) for sid in ids)
            done = 0
            tick("sessions", 0, total)
            for export in source.iter_exports(ids):
                report.values_replaced += unstorable_values(export)
                added_sessions, added_messages = db.copy_session(export)
                report.sessions_added += added_sessions
                report.messages_added += added_messages
                done += max(1, len(export["messages"]))
                tick("sessions", done, total)
            _verify_sessions(db, ids, per_session, report)
        _copy_memory(home, config, target, sets, report, tick)
    return report


def _verify_sessions(db: Any, ids: list[str], per_session: dict[str, int], report: MigrationReport) -> None:
    missing = []
    for sid in ids:
        if db.get_session(sid) is None:
            missing.append(sid)
            continue
        report.sessions_target += 1
        n = db.message_count(sid)
        report.messages_target += n
        if n != per_session.get(sid, 0):
            report.problems.append(f"session {sid}: {count(per_session.get(sid, 0), 'message')} in state.db, {n:,} in the target")
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        report.problems.append(f"{count(len(missing), 'session')} missing in the target: {shown}")


def _copy_memory(home: HermesHome, config: HermesConfig, target: Storage, sets: list[MemorySet],
                 report: MigrationReport, tick: Progress) -> None:
    from hermes_memory.memory import open_memory_store

    tick("memory", 0, len(sets))
    for i, mset in enumerate(sets, 1):
        store = open_memory_store(home, config, user_id=mset.user_id, storage=target)
        try:
            added = import_entries(store, mset.target, mset.entries)
            after = open_memory_store(home, config, user_id=mset.user_id, storage=target)
            try:
                now = after.entries(mset.target)
            finally:
                _close(after)
        finally:
            _close(store)
        name = mset.path.name if mset.user_id is None else f"users/{mset.user_id}/{mset.path.name}"
        report.memory.append({"target": mset.target, "user_id": mset.user_id, "file": name,
                              "entries_source": len(mset.entries), "entries_target": len(now), "added": added})
        if now[: len(mset.entries)] != mset.entries and not _contains_in_order(now, mset.entries):
            report.problems.append(f"{name}: the target's entries differ from the file's "
                                   f"({len(mset.entries)} in the file, {len(now)} in the target)")
        tick("memory", i, len(sets))


def import_entries(store: Any, target: str, entries: list[str]) -> int:
    """Put ``entries`` (file order) into ``store``'s ``target`` without loss; returns how many were added.

    Entries already there are kept and not added twice; the missing ones are appended after them in
    file order. One transaction under the target's lock (the store's own critical section, the one
    every ``add`` takes), so hosts writing meanwhile lose nothing. No limit or threat-scan check: the
    entries are already the user's; both backends render over-limit and blocked entries the same way.
    Raises :class:`~hermes_memory.errors.MemoryStoreError` when the target cannot be read or written.
    """
    from hermes_memory.errors import MemoryStoreError

    with store.backend.mutation(target) as txn:
        if txn.stored.error:
            raise MemoryStoreError(f"cannot read {store.location(target)}: {txn.stored.error}; nothing was copied")
        have = set(txn.stored.entries)
        missing = [e for e in entries if e not in have]
        if missing:
            txn.save([*txn.stored.entries, *missing])
    return len(missing)


def _contains_in_order(haystack: list[str], needles: list[str]) -> bool:
    it = iter(haystack)
    return all(any(h == n for h in it) for n in needles)


def _close(store: Any) -> None:
    close = getattr(store, "close", None)
    if callable(close):
        close()
