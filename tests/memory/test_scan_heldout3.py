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

import pytest

from hermes_memory.memory.scan import find_threats, scan_memory_content
from tests.memory import corpora

LOG = json.loads((corpora.DATA / "heldout3_measurements.json").read_text(encoding="utf-8"))["measurements"]
LAST = LOG[-1]
#: Corpora the scan was tuned on before this set was written, as named in the log's entries (the set
#: itself joined corpora.TUNING after its second look, and later sets after it).
TUNING = list(corpora.TUNING[: corpora.TUNING.index("heldout3")])


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


def test_heldout3_was_looked_at_only_before_and_after() -> None:
    assert [m["n"] for m in LOG] == list(range(1, len(LOG) + 1))
    assert len(LOG) <= 2, "the sealed set is measured once before and once after: write a new one to measure again"
    assert LOG[0]["label"].startswith("before: scan as on main")
    assert LOG[0]["heldout3_attacks_blocked"] == "131/267" and LOG[0]["heldout3_benign_refused"] == "9/445"


def test_heldout3_overall_figures_hold_at_the_last_measurement() -> None:
    attacks, benign = corpora.heldout3_attacks(), corpora.heldout3_benign()
    blocked = sum(scan_memory_content(p) is not None for _, p in attacks)
    refused = sum(scan_memory_content(n) is not None for _, n in benign)
    print(f"\nheld-out 3: blocked {blocked}/{len(attacks)}, refused {refused}/{len(benign)}")
    want_b, total_b = corpora.ratio(LAST["heldout3_attacks_blocked"])
    want_r, total_r = corpora.ratio(LAST["heldout3_benign_refused"])
    assert (len(attacks), len(benign)) == (total_b, total_r)
    assert blocked >= want_b and refused <= want_r


@pytest.mark.parametrize("family", sorted(LAST["heldout3_per_family"]))
def test_heldout3_attack_family_holds_at_the_last_measurement(family: str) -> None:
    phrasings = corpora.by_key(corpora.heldout3_attacks())[family]
    blocked = sum(scan_memory_content(p) is not None for p in phrasings)
    assert blocked >= corpora.ratio(LAST["heldout3_per_family"][family])[0]


@pytest.mark.parametrize("category", sorted(LAST["heldout3_per_category"]))
def test_heldout3_benign_category_holds_at_the_last_measurement(category: str) -> None:
    notes = corpora.by_key(corpora.heldout3_benign())[category]
    refused = [find_threats(n) for n in notes if scan_memory_content(n) is not None]
    # the families named, not the notes: the sealed set's texts stay out of test output
    assert len(refused) <= corpora.ratio(LAST["heldout3_per_category"][category])[0], refused


@pytest.mark.parametrize("corpus", TUNING)
def test_the_tuning_corpora_hold_at_the_figures_logged_with_the_last_heldout3_look(corpus: str) -> None:
    attacks, benign = corpora.tuning_corpus(corpus)
    blocked = sum(scan_memory_content(p) is not None for p in attacks)
    refused = sum(scan_memory_content(n) is not None for n in benign)
    want_b, total_b = corpora.ratio(LAST[f"{corpus}_attacks_blocked"])
    want_r, total_r = corpora.ratio(LAST[f"{corpus}_benign_refused"])
    if LAST is not LOG[0]:  # the corpora may grow with the tuning after the "before" look
        assert (len(attacks), len(benign)) == (total_b, total_r)
    assert blocked >= want_b and refused <= want_r
