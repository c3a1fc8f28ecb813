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

from tests.memory import corpora, sealed

SET = sealed.SealedSet("heldout6", sisters=("heldout5",))
CORPUS = SET.corpus
LOG = SET.log
RECORD_COMMAND = SET.record_command
#: The fifth set, still sealed while this one was written (so not in :func:`tuning_names`, corpora.SEALED_WHEN_WRITTEN): heldout6 must share no phrasing with it either.
SISTER = SET.sister_sets()[0]
attacks = SET.attacks
benign = SET.benign
tuning_names = SET.tuning_names
tuning_texts = corpora.tuning_corpus
#: The ``texts`` equal (folded) to a text of the tuning corpora (:meth:`sealed.SealedSet.shared_with_tuning`).
shared_with_tuning = SET.shared_with_tuning
#: ``python -m tests.memory.heldout6 --record LABEL`` (:func:`tests.memory.sealed.main` for heldout6).
main = SET.main
__all__ = ["CORPUS", "LOG", "RECORD_COMMAND", "SET", "SISTER", "main", "shared_with_sister", "shared_with_tuning"]


def shared_with_sister(texts: list[str], sister: sealed.SealedSet = SISTER) -> list[str]:
    """The ``texts`` whose folded form (:func:`corpora.fold`) equals that of an attack or note of ``sister``.

    Returns texts of ``texts`` only, never one of ``sister``'s (a sealed set's texts stay out of output).
    """
    return SET.shared_with_sisters(texts, (sister,))


if __name__ == "__main__":
    raise SystemExit(main())
