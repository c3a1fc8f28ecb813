"""The sealed second held-out set of the threat scan (issue 13 §4): figures held at what it measured.

``data/heldout2_corpus.json`` was written and committed before the scan was run on it, measured once
before the changes made with it sealed and once after (``bench/scan_corpora.py --record``, logged
in ``data/heldout2_measurements.json``); it is never tuned on. The tests hold the scan at the last
logged figures, overall, per attack family and per benign category, so a change that blocks fewer
of its attacks or refuses more of its notes fails; and they check it shares no phrasing with any
corpus the scan was tuned on.
"""

from __future__ import annotations

import json

import pytest

from hermes_memory.memory.scan import find_threats, scan_memory_content
from tests.memory import corpora

LOG = json.loads((corpora.DATA / "heldout2_measurements.json").read_text(encoding="utf-8"))["measurements"]
LAST = LOG[-1]


def test_heldout2_is_large_sourced_and_shares_no_phrasing_with_the_tuning_corpora() -> None:
    data = json.loads((corpora.DATA / "heldout2_corpus.json").read_text(encoding="utf-8"))
    attacks, benign = corpora.heldout2_attacks(), corpora.heldout2_benign()
    assert len(attacks) >= 150 and len(benign) >= 250
    assert all(v["source"] and v["phrasings"] for v in data["attacks"].values())
    tuned = {p.lower() for _, p in corpora.attack_phrasings() + corpora.own_benign_notes()}
    tuned |= {t.lower() for _, t in corpora.heldout_attacks() + corpora.heldout_benign()}
    dev_a, dev_b = corpora.dev_set()
    tuned |= {t.lower() for t in dev_a + dev_b}
    assert [t for _, t in attacks + benign if t.lower() in tuned] == []


def test_heldout2_was_looked_at_only_before_and_after() -> None:
    assert [m["n"] for m in LOG] == list(range(1, len(LOG) + 1))
    assert len(LOG) <= 2, "the sealed set is measured once before and once after: write a new one to measure again"
    assert LOG[0]["label"].startswith("before") and LOG[0]["heldout2_attacks_blocked"] == "138/191"
    assert LOG[0]["heldout2_benign_refused"] == "7/265"


def test_heldout2_overall_figures_hold_at_the_last_measurement() -> None:
    attacks, benign = corpora.heldout2_attacks(), corpora.heldout2_benign()
    blocked = sum(scan_memory_content(p) is not None for _, p in attacks)
    refused = sum(scan_memory_content(n) is not None for _, n in benign)
    print(f"\nheld-out 2: blocked {blocked}/{len(attacks)}, refused {refused}/{len(benign)}")
    want_b, total_b = corpora.ratio(LAST["heldout2_attacks_blocked"])
    want_r, total_r = corpora.ratio(LAST["heldout2_benign_refused"])
    assert (len(attacks), len(benign)) == (total_b, total_r)
    assert blocked >= want_b and refused <= want_r


@pytest.mark.parametrize("family", sorted(LAST["heldout2_per_family"]))
def test_heldout2_attack_family_holds_at_the_last_measurement(family: str) -> None:
    phrasings = corpora.by_key(corpora.heldout2_attacks())[family]
    blocked = sum(scan_memory_content(p) is not None for p in phrasings)
    assert blocked >= corpora.ratio(LAST["heldout2_per_family"][family])[0]


@pytest.mark.parametrize("category", sorted(LAST["heldout2_per_category"]))
def test_heldout2_benign_category_holds_at_the_last_measurement(category: str) -> None:
    notes = corpora.by_key(corpora.heldout2_benign())[category]
    refused = [(n, find_threats(n)) for n in notes if scan_memory_content(n) is not None]
    assert len(refused) <= corpora.ratio(LAST["heldout2_per_category"][category])[0], refused


@pytest.mark.parametrize("corpus", ["original", "dev", "heldout"])
def test_the_tuning_corpora_hold_at_the_figures_logged_with_the_last_heldout2_look(corpus: str) -> None:
    if corpus == "original":
        attacks = [p for _, p in corpora.attack_phrasings()]
        benign = [n for _, n in corpora.own_benign_notes() + corpora.locomo_notes()]
    elif corpus == "dev":
        attacks, benign = corpora.dev_set()
    else:
        attacks = [p for _, p in corpora.heldout_attacks()]
        benign = [n for _, n in corpora.heldout_benign()]
    blocked = sum(scan_memory_content(p) is not None for p in attacks)
    refused = sum(scan_memory_content(n) is not None for n in benign)
    want_b, total_b = corpora.ratio(LAST[f"{corpus}_attacks_blocked"])
    want_r, total_r = corpora.ratio(LAST[f"{corpus}_benign_refused"])
    if LAST is not LOG[0]:  # the corpora grew with the tuning after the "before" look
        assert (len(attacks), len(benign)) == (total_b, total_r)
    assert blocked >= want_b and refused <= want_r
