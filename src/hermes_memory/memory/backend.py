"""The entries-backend interface: where :class:`~hermes_memory.memory.store.MemoryStore` keeps its entries.

The store owns the behaviour (limits, duplicates, matching, batches, the threat scan, the frozen
snapshot, results); a backend owns only storage, in three operations:

* :meth:`EntriesBackend.read` -- the entries of one target as they are now (no lock);
* :meth:`EntriesBackend.mutation` -- a context manager that serialises every writer of one target
  (across threads, processes and, for a database, hosts), reads the target *inside* that critical
  section and yields an :class:`EntriesTxn`; the store decides and calls :meth:`EntriesTxn.save` at
  most once; leaving the block without saving changes nothing, and an exception changes nothing;
* the drift guard in backend terms: :attr:`Stored.text` is the stored text as the joined file would
  read (newline-normalised), so the store can tell entries it did not write in its own form
  (:func:`~hermes_memory.memory.entries.drift_reason`); :meth:`EntriesTxn.backup` keeps a copy
  before refusing, and :meth:`EntriesBackend.drift_fix` says how to repair the stored form.

Backends: :class:`~hermes_memory.memory.filebackend.FileBackend` (MEMORY.md / USER.md, today's
behaviour) and :class:`~hermes_memory.memory.pg.backend.PgBackend` (rows in PostgreSQL).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass


@dataclass
class Stored:
    """One read of a target: parsed entries, the normalised stored text, or why it could not be read.

    ``error`` set means the target is unreadable (not the same as empty): every mutation is refused
    and nothing is written until it is fixed.
    """

    entries: list[str]
    text: str = ""
    error: str | None = None


class EntriesTxn(ABC):
    """The critical section of one mutation: ``stored`` was read under the target's exclusive lock."""

    stored: Stored

    @abstractmethod
    def save(self, entries: Sequence[str], *, canonical: bool = False) -> list[str]:
        """Replace the target's entries with ``entries`` (in order), durably, before the lock is released.

        Returns the entries as a read now gives them: ``entries`` itself (the same list object when
        it is one) unless the stored form reads back otherwise (a file entry that hides a
        delimiter, kept from a hand edit). ``canonical``: the caller vouches that every entry is
        stripped, non-empty and unique (the store's own invariant: they come from a parse or a
        cleaned field), so a backend that keeps what it wrote may skip parsing it again. Raises :class:`~hermes_memory.errors.MemoryStoreError` when the write fails; the stored
        entries are then unchanged.
        """

    @abstractmethod
    def backup(self) -> tuple[str, str]:
        """Keep a copy of the stored state before a drift refusal; returns ``(short name, full reference)``.

        Raises :class:`~hermes_memory.errors.MemoryStoreError` when no copy can be made.
        """


class EntriesBackend(ABC):
    """Storage of the two targets of one store (``memory`` shared, ``user`` per user when one is set)."""

    #: ``"file"`` or ``"postgres"``.
    kind: str = ""
    #: Seconds a mutation waits for the target's lock before giving up (raising, nothing written).
    lock_timeout_s: float = 30.0
    #: How a refusal says what it left alone: ``"the file was left untouched"`` / ``"its rows were ..."``.
    untouched: str = "the file was left untouched"

    @abstractmethod
    def location(self, target: str) -> str:
        """Where ``target`` lives, for people: a file path, or the database and key (never a password)."""

    @abstractmethod
    def read(self, target: str) -> Stored:
        """The entries of ``target`` now, without taking the lock (an unreadable target sets ``error``)."""

    @abstractmethod
    def mutation(self, target: str) -> AbstractContextManager[EntriesTxn]:
        """Serialise writers of ``target`` and yield the transaction (see the module docstring).

        Raises :class:`~hermes_memory.errors.MemoryStoreError` (or its subclasses) when the lock
        cannot be taken within :attr:`lock_timeout_s` seconds or the storage cannot be reached.
        """

    @abstractmethod
    def drift_fix(self, target: str, reason: str, limit: int, backup_name: str) -> str:
        """How a person repairs ``target`` stored in a form the store does not write (``reason``:
        ``"too_big"`` or ``"format"``, see :func:`~hermes_memory.memory.entries.drift_reason`)."""

    @abstractmethod
    def user_ids(self) -> list[str]:
        """The user ids that have a per-user USER.md in this storage, sorted (for export)."""

    def close(self) -> None:  # noqa: B027 - optional hook; files hold nothing worth closing
        """Release what the backend holds (connections); the store must not be used afterwards."""
