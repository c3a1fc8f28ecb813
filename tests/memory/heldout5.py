"""The fifth sealed held-out set of the threat scan (issue 13 §4): the :mod:`tests.memory.sealed` mechanism for ``heldout5``.

``data/heldout5_corpus.json`` was written blind (without reading the scan's modules, its model, its
training scripts or the texts of the corpora it was tuned on) and committed before the scan was run
on it. It is looked at twice: once with the scan as on main before the next round of scan changes,
once after them; every figure of a look is logged in ``data/heldout5_measurements.json`` by::

    .venv/bin/python -m tests.memory.heldout5 --record "before: scan as on main <sha>, no change made for this set"

(the same as ``python -m tests.memory.sealed heldout5 --record ...``; the rules of a look are the
mechanism's: two looks at most, ``before: scan as on main`` then ``after:``, ``src/`` committed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.memory import corpora, sealed
from tests.memory.sealed import FIRST_LABEL, MAX_LOOKS, SECOND_LABEL
from tests.memory.sealed import measure as _measure

SET = sealed.SealedSet("heldout5")
CORPUS = SET.corpus
LOG = SET.log
RECORD_COMMAND = SET.record_command
attacks = SET.attacks
benign = SET.benign
tuning_names = SET.tuning_names
tuning_texts = corpora.tuning_corpus
#: The ``texts`` equal (folded) to a text of the tuning corpora (:meth:`sealed.SealedSet.shared_with_tuning`).
shared_with_tuning = SET.shared_with_tuning
#: ``python -m tests.memory.heldout5 --record LABEL`` (:func:`tests.memory.sealed.main` for heldout5).
main = SET.main
__all__ = ["CORPUS", "FIRST_LABEL", "LOG", "MAX_LOOKS", "SECOND_LABEL", "SET", "append_look", "main", "measure"]


def load_log(path: Path = LOG) -> list[dict[str, Any]]:
    """The looks logged at ``path`` (default heldout5's log), oldest first."""
    return sealed.load_log(path)


def measure(*args: Any) -> dict[str, Any]:
    """:func:`tests.memory.sealed.measure` for heldout5 (``scan, explain, set_attacks, set_benign, tuning``)."""
    return _measure(SET.name, *args)


def append_look(*args: Any) -> list[dict[str, Any]]:
    """:func:`tests.memory.sealed.append_look` for heldout5 (``log, label, figures, scan_commit, at``)."""
    return sealed.append_look(SET.name, *args)


if __name__ == "__main__":
    raise SystemExit(main())
