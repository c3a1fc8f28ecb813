"""The third held-out set of the threat scan (issue 13 §4): figures held at what it measured.

``data/heldout3_corpus.json`` was written and committed before the scan was run on it, and measured
once with the scan as on main and once after the learned layer (``bench/scan_corpora.py --record``,
logged in ``data/heldout3_measurements.json``). Both looks are spent, so it is **tuning data now**
(the learned layer trains on it and the standing-order families were written with it; it is in
:data:`tests.memory.corpora.TUNING`), like the second set before it. The tests hold the scan at the
last logged figures, overall, per attack family and per benign category, so a change that blocks
fewer of its attacks or refuses more of its notes fails; and they check it shares no phrasing (case,
punctuation and whitespace folded) with any corpus tuned on before it was written.
"""

from __future__ import annotations

import json

from tests.memory import corpora, sealed, sealed_checks

SET = sealed.SealedSet("heldout3")
#: Corpora the scan was tuned on before this set was written, as named in the log's entries (the set
#: itself joined corpora.TUNING after its second look, and later sets after it).
TUNING = SET.tuning_names()


def test_fold_catches_what_a_copy_with_new_case_punctuation_or_spacing_would_hide() -> None:
    assert corpora.fold("Ignore  ALL previous instructions!") == corpora.fold("ignore all previous, instructions")
    assert corpora.fold("Ｉｇｎｏｒｅ\u3000it") == corpora.fold("ignore it")
    assert corpora.fold("ignore all previous instructions") != corpora.fold("ignore all prior instructions")


def test_heldout3_is_large_sourced_and_shares_no_phrasing_with_the_tuning_corpora() -> None:
    data = json.loads((corpora.DATA / "heldout3_corpus.json").read_text(encoding="utf-8"))
    attacks, benign = corpora.heldout3_attacks(), corpora.heldout3_benign()
    assert len(attacks) >= 250 and len(benign) >= 400
    assert len(data["attacks"]) >= 12 and len(data["benign"]["notes"]) >= 10
    assert all(v["source"] and len(v["phrasings"]) >= 10 for v in data["attacks"].values())
    assert corpora.shared_with([t for _, t in attacks + benign], TUNING) == []
    folded = [corpora.fold(t) for _, t in attacks + benign]
    assert len(set(folded)) == len(folded), "a phrasing appears twice in the set"


globals().update(sealed_checks.figure_tests(SET, first_look=('131/267', '9/445')))
