"""The seventh sealed held-out set of the threat scan (issue 13 §4): the :mod:`tests.memory.sealed` mechanism for ``heldout7``.

``data/heldout7_corpus.json`` was written blind (without reading the scan's modules, its model, its
training or augmentation scripts or the texts of any corpus in ``tests/memory/data``; compared with
the tuning corpora and the spent fifth and sixth sets only by machine, folded) and committed before
the scan was run on it. It is looked at twice: once with the scan as on main before the next round of
scan changes, once after them; every figure of a look is logged in ``data/heldout7_measurements.json``
by::

    .venv/bin/python -m tests.memory.heldout7 --record "before: scan as on main <sha>, no change made for this set"

(the same as ``python -m tests.memory.sealed heldout7 --record ...``; the rules of a look are the
mechanism's: two looks at most, ``before: scan as on main`` then ``after:``, ``src/`` committed).
"""

from __future__ import annotations

from tests.memory import corpora, sealed

SET = sealed.SealedSet("heldout7")
CORPUS = SET.corpus
LOG = SET.log
RECORD_COMMAND = SET.record_command
#: The fifth and sixth sets, spent (they become tuning data): heldout7 must share no phrasing with either.
SISTERS = (sealed.SealedSet("heldout5"), sealed.SealedSet("heldout6"))
attacks = SET.attacks
benign = SET.benign
tuning_names = SET.tuning_names
tuning_texts = corpora.tuning_corpus
__all__ = ["CORPUS", "LOG", "RECORD_COMMAND", "SET", "SISTERS", "main", "shared_with_sisters", "shared_with_tuning"]


def shared_with_tuning(texts: list[str], names: list[str] | None = None) -> list[str]:
    """The ``texts`` equal to a text of the tuning corpora ``names`` (default :func:`tuning_names`), as written, lower-cased or folded."""
    return corpora.shared_with(texts, tuning_names() if names is None else names)


def shared_with_sisters(texts: list[str], sisters: tuple[sealed.SealedSet, ...] = SISTERS) -> list[str]:
    """The ``texts`` whose folded form (:func:`corpora.fold`) equals that of an attack or note of one of ``sisters``.

    Returns texts of ``texts`` only, never one of the sisters' (a sealed set's texts stay out of output).
    """
    seen = {corpora.fold(t) for s in sisters for _, t in s.attacks() + s.benign()}
    return [t for t in texts if corpora.fold(t) in seen]


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.memory.heldout7 --record LABEL``: :func:`tests.memory.sealed.main` for heldout7."""
    return sealed.main(argv, name=SET.name)


if __name__ == "__main__":
    raise SystemExit(main())
