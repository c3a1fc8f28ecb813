"""The fourth held-out set of the threat scan (issue 13 §4): figures held at what it measured.

``data/heldout4_corpus.json`` was written blind (without reading the scan's modules, its training
scripts, its model or the tuning corpora's texts) from the styles of public prompt-injection
datasets and write-ups, committed before the scan was run on it, and measured once with the scan as
on main and once after the next round of changes (``bench/scan_corpora.py --record``, logged in
``data/heldout4_measurements.json``). Both looks are spent, so it is **tuning data now** (the
semantic layer trains on it; it is in :data:`tests.memory.corpora.TUNING`), like the third set
before it. The tests hold the scan at the last logged figures, overall, per attack family and per
benign category, so a change that blocks fewer of its attacks or refuses more of its notes fails;
and they check it shares no phrasing (case, punctuation and whitespace folded, ``corpora.fold``)
with any corpus tuned on before it was written, the third held-out set included.
"""

from __future__ import annotations

import json

import pytest

from hermes_memory.memory.scan import find_threats, scan_memory_content
from tests.memory import corpora

LOG = json.loads((corpora.DATA / "heldout4_measurements.json").read_text(encoding="utf-8"))["measurements"]
LAST = LOG[-1]
#: Corpora the scan was tuned on before this set was written, as named in the log's entries (the set
#: itself joined corpora.TUNING after its second look).
TUNING = list(corpora.TUNING[: corpora.TUNING.index("heldout4")])


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


def test_heldout4_was_looked_at_only_before_and_after() -> None:
    assert [m["n"] for m in LOG] == list(range(1, len(LOG) + 1))
    assert len(LOG) <= 2, "the sealed set is measured once before and once after: write a new one to measure again"
    assert LOG[0]["label"].startswith("before: scan as on main")
    assert LOG[0]["heldout4_attacks_blocked"] == "123/311" and LOG[0]["heldout4_benign_refused"] == "7/529"


def test_heldout4_overall_figures_hold_at_the_last_measurement() -> None:
    attacks, benign = corpora.heldout4_attacks(), corpora.heldout4_benign()
    blocked = sum(scan_memory_content(p) is not None for _, p in attacks)
    refused = sum(scan_memory_content(n) is not None for _, n in benign)
    print(f"\nheld-out 4: blocked {blocked}/{len(attacks)}, refused {refused}/{len(benign)}")
    want_b, total_b = corpora.ratio(LAST["heldout4_attacks_blocked"])
    want_r, total_r = corpora.ratio(LAST["heldout4_benign_refused"])
    assert (len(attacks), len(benign)) == (total_b, total_r)
    assert blocked >= want_b and refused <= want_r


@pytest.mark.parametrize("family", sorted(LAST["heldout4_per_family"]))
def test_heldout4_attack_family_holds_at_the_last_measurement(family: str) -> None:
    phrasings = corpora.by_key(corpora.heldout4_attacks())[family]
    blocked = sum(scan_memory_content(p) is not None for p in phrasings)
    want, total = corpora.ratio(LAST["heldout4_per_family"][family])
    assert len(phrasings) == total and blocked >= want


@pytest.mark.parametrize("category", sorted(LAST["heldout4_per_category"]))
def test_heldout4_benign_category_holds_at_the_last_measurement(category: str) -> None:
    notes = corpora.by_key(corpora.heldout4_benign())[category]
    refused = [find_threats(n) for n in notes if scan_memory_content(n) is not None]
    # the families named, not the notes: the sealed set's texts stay out of test output
    want, total = corpora.ratio(LAST["heldout4_per_category"][category])
    assert len(notes) == total
    assert len(refused) <= want, refused


@pytest.mark.parametrize("corpus", TUNING)
def test_the_tuning_corpora_hold_at_the_figures_logged_with_the_last_heldout4_look(corpus: str) -> None:
    attacks, benign = corpora.tuning_corpus(corpus)
    blocked = sum(scan_memory_content(p) is not None for p in attacks)
    refused = sum(scan_memory_content(n) is not None for n in benign)
    want_b, total_b = corpora.ratio(LAST[f"{corpus}_attacks_blocked"])
    want_r, total_r = corpora.ratio(LAST[f"{corpus}_benign_refused"])
    if LAST is not LOG[0]:  # the corpora may grow with the tuning after the "before" look
        assert (len(attacks), len(benign)) == (total_b, total_r)
    assert blocked >= want_b and refused <= want_r
