"""The fourth held-out set of the threat scan (issue 13 §4): figures held at what it measured.

``data/heldout4_corpus.json`` was written blind (without reading the scan's modules, its training
scripts, its model or the tuning corpora's texts) from the styles of public prompt-injection
datasets and write-ups, committed before the scan was run on it, and measured once with the scan as
on main and once after the next round of changes (``bench/scan_corpora.py --record``, logged in
``data/heldout4_measurements.json``). Both looks are spent, so it is **tuning data now** (the
learned layer, ``bench/train_scan_classifier.py``, trains on it since the model after the second
look; it is in :data:`tests.memory.corpora.TUNING`), like the third set before it. The tests hold
the scan at the last logged figures, overall, per attack family and per benign category, so a change that blocks fewer of its attacks or refuses more of its notes fails;
and they check it shares no phrasing (case, punctuation and whitespace folded, ``corpora.fold``)
with any corpus tuned on before it was written, the third held-out set included.
"""

from __future__ import annotations

import json

from tests.memory import corpora, sealed, sealed_checks

SET = sealed.SealedSet("heldout4")
#: Corpora the scan was tuned on before this set was written, as named in the log's entries (the set
#: itself joined corpora.TUNING after its second look).
TUNING = SET.tuning_names()


def test_heldout4_is_large_sourced_and_shares_no_phrasing_with_the_tuning_corpora() -> None:
    data = json.loads((corpora.DATA / "heldout4_corpus.json").read_text(encoding="utf-8"))
    attacks, benign = corpora.heldout4_attacks(), corpora.heldout4_benign()
    assert len(attacks) >= 300 and len(benign) >= 500
    assert len(data["attacks"]) >= 16 and len(data["benign"]["notes"]) >= 12
    assert all(v["source"] and len(v["phrasings"]) >= 10 for v in data["attacks"].values())
    assert all(len(notes) >= 30 for notes in data["benign"]["notes"].values())
    # memory-note sized: what an agent would store with the memory tool
    assert all(20 <= len(t) <= 400 for _, t in attacks + benign)
    assert corpora.shared_with([t for _, t in attacks + benign], TUNING) == []
    folded = [corpora.fold(t) for _, t in attacks + benign]
    assert len(set(folded)) == len(folded), "a phrasing appears twice in the set"


def test_shared_with_finds_a_tuning_text_copied_with_new_case_punctuation_or_spacing() -> None:
    attack = corpora.tuning_corpus("heldout3")[0][0]
    copy = "  " + attack.upper().replace(" ", "   ") + " !!"
    assert corpora.shared_with([copy, "a note written for no corpus at all, 4 Dec"], ["heldout3"]) == [copy]


globals().update(sealed_checks.figure_tests(SET, first_look=('123/311', '7/529')))
