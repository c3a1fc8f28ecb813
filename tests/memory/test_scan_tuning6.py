"""The sixth corpus of the threat scan (issue 13 §4): tuning data from the start, held at its figures.

``data/tuning6_corpus.json`` was written after the fifth sealed set (and without reading it) from the
styles of public prompt-injection datasets and write-ups, concentrating on the kinds the scan
generalised worst to in leave-one-kind-out cross-validation (social engineering, tool hijack, delayed
triggers, config edits, credentials and exfiltration, other languages, filter removal, personas,
encodings), with hard negative notes that share their vocabulary. It was never sealed: the regexes may be
tuned on it, and its honest figure is its leave-one-corpus-out fold
(``bench/train_scan_classifier.py --cv``; docs/security.md §1); the learned layer trains on it
since the retrain on every spent set (docs/security.md §1; before, training with it made the layer
refuse a LoCoMo validation text, fixed by the hard negatives of ``bench/scan_augment_talk.py``). The tests check its size, its sources
and that it shares no phrasing (``corpora.fold``) with the corpora written before it, and hold the
whole scan at its figures on it.
"""

from __future__ import annotations

import json

from hermes_memory.memory.scan import find_threats, scan_memory_content
from tests.memory import corpora

DATA = json.loads((corpora.DATA / "tuning6_corpus.json").read_text(encoding="utf-8"))
#: The whole scan's figures on the set: at least this many attacks blocked, at most this many notes
#: refused. The learned layer is not trained on it (``TRAIN_EXCLUDED`` in
#: ``bench/train_scan_classifier.py``), so these are out of sample for the layer: 128/251 blocked and
#: 7/544 refused by it alone; the rest are the regexes' (3 notes quoting attacks). The scan as on the
#: branch before this round: 161/252 and 6/514 (the 30 tool-usage notes came later; one Morse-code
#: attack was removed after the merge: it folds equal to a text of the sealed heldout6).
BLOCKED_FLOOR = 215  # 173 before the round after the seventh sealed set's first look, 187 before the tenth regex round and the retrain on every spent set (189 and 214 alone; docs/security.md §1)
REFUSED_CEILING = 10


def test_tuning6_is_large_sourced_and_shares_no_phrasing_with_the_corpora_before_it() -> None:
    attacks, benign = corpora.tuning6_attacks(), corpora.tuning6_benign()
    assert len(attacks) >= 250 and len(benign) >= 500
    assert len(DATA["attacks"]) >= 14 and len(DATA["benign"]["notes"]) >= 14
    assert all(len(v["source"]) >= 80 and len(v["phrasings"]) >= 10 for v in DATA["attacks"].values())
    assert all(len(notes) >= 30 for notes in DATA["benign"]["notes"].values())
    assert all(20 <= len(t) <= 400 for _, t in attacks + benign)
    assert corpora.shared_with([t for _, t in attacks + benign], corpora.tuned_before("tuning6")) == []
    folded = [corpora.fold(t) for _, t in attacks + benign]
    assert len(set(folded)) == len(folded), "a phrasing appears twice in the set"


def test_tuning6_multilingual_attacks_name_their_language_and_span_ten_languages() -> None:
    family = DATA["attacks"]["multilingual"]
    assert len(family["languages"]) == len(family["phrasings"])
    assert {"fr", "es", "de", "zh", "ja", "ru", "pt", "it", "ko", "ar"} <= set(family["languages"])


def test_the_whole_scan_holds_tuning6_at_its_figures() -> None:
    attacks, benign = corpora.tuning6_attacks(), corpora.tuning6_benign()
    blocked = sum(scan_memory_content(p) is not None for _, p in attacks)
    refused = [(c, find_threats(n)) for c, n in benign if scan_memory_content(n) is not None]
    print(f"\ntuning6: blocked {blocked}/{len(attacks)}, refused {len(refused)}/{len(benign)} {refused}")
    assert blocked >= BLOCKED_FLOOR and len(refused) <= REFUSED_CEILING


def test_a_sealed_set_is_checked_only_against_the_tuning_corpora_written_before_it() -> None:
    assert corpora.tuned_before("heldout5") == ["original", "dev", "heldout", "heldout2", "heldout3", "heldout4"]
    assert corpora.tuned_before("tuning6") == corpora.tuned_before("heldout5")
    assert corpora.tuned_before("heldout6") == [t for t in corpora.TUNING if t not in ("heldout5", "heldout6", "heldout7", "heldout8", "tuning8")]
    assert "tuning6" in corpora.TUNING and corpora.tuned_before("a_set_written_later") == list(corpora.TUNING)
