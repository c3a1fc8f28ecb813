"""The tenth sealed held-out set of the threat scan (issue 13 §4): the :mod:`tests.memory.sealed` mechanism for ``heldout10``.

``data/heldout10_corpus.json`` was written blind (without reading the scan's modules, its model, its
training or augmentation scripts or the texts of any corpus in ``tests/memory/data``; compared with
the tuning corpora and with heldout9 only by machine, folded) and committed before the scan was run
on it. It is looked at twice: once with the scan as on main before the next round of scan changes,
once after them; every figure of a look is logged in ``data/heldout10_measurements.json`` by::

    .venv/bin/python -m tests.memory.heldout10 --record "before: scan as on main <sha>, no change made for this set"

(the same as ``python -m tests.memory.sealed heldout10 --record ...``; the rules of a look are the
mechanism's: two looks at most, ``before: scan as on main`` then ``after:``, ``src/`` committed).
"""

from __future__ import annotations

from tests.memory import sealed

#: heldout9, still sealed while this set was written (corpora.SEALED_WHEN_WRITTEN): heldout10 must
#: share no phrasing with it, whether or not it joins TUNING later.
SET = sealed.SealedSet("heldout10", sisters=("heldout9",))
#: ``python -m tests.memory.heldout10 --record LABEL`` (:func:`tests.memory.sealed.main` for heldout10).
main = SET.main
__all__ = ["SET", "main"]


if __name__ == "__main__":
    raise SystemExit(main())
