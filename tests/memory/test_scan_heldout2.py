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

from tests.memory import corpora, sealed, sealed_checks

SET = sealed.SealedSet("heldout2")


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


globals().update(sealed_checks.figure_tests(SET, first_look=('138/191', '7/265')))
