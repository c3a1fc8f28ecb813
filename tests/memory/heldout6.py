"""The sixth sealed held-out set of the threat scan (issue 13 §4): the :mod:`tests.memory.sealed` mechanism for ``heldout6``.

``data/heldout6_corpus.json`` was written blind (without reading the scan's modules, its model, its
training or augmentation scripts or the texts of any corpus in ``tests/memory/data``; compared with
the tuning corpora and the still-sealed fifth set only by machine, folded) and committed before the
scan was run on it. It is looked at twice: once with the scan as on main before the next round of
scan changes, once after them; every figure of a look is logged in ``data/heldout6_measurements.json``
by::

    .venv/bin/python -m tests.memory.heldout6 --record "before: scan as on main <sha>, no change made for this set"

(the same as ``python -m tests.memory.sealed heldout6 --record ...``; the rules of a look are the
mechanism's: two looks at most, ``before: scan as on main`` then ``after:``, ``src/`` committed).
"""

from __future__ import annotations

from tests.memory import sealed

SET = sealed.SealedSet("heldout6", sisters=("heldout5",))
#: ``python -m tests.memory.heldout6 --record LABEL`` (:func:`tests.memory.sealed.main` for heldout6).
main = SET.main
__all__ = ["SET", "main"]


if __name__ == "__main__":
    raise SystemExit(main())
