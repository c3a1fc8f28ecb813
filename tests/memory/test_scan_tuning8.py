"""The eighth corpus of the threat scan (issue 13 §4): tuning data from the start, held at its figures.

``data/tuning8_corpus.json`` was written after the seventh sealed set (and without reading it: only its
per-family first-look counts) from the styles of public prompt-injection datasets and write-ups,
concentrating on the families that look showed weakest (credential planting, tool hijack, attacks
posing as preferences, social engineering, polite wrappers, context exfiltration, fake updates,
destructive commands, config edits, split payloads, translate-and-execute, exfiltration, 26
languages), with hard negative notes in the same words (real preferences, polite requests, a team's
real mirror, CA or payment details as facts, kept commands, changelogs, meeting-room changes,
ordinary notes in the same languages). It was never sealed: the regexes may be tuned on it; its
first look (the scan before any change made for it) is recorded in docs/security.md §1. The learned
layer trains on it since the retrain on every spent set (docs/security.md §1; its ``--cv`` fold is the honest figure).
"""

from __future__ import annotations

import json

from hermes_memory.memory.scan import find_threats, scan_memory_content
from tests.memory import corpora

DATA = json.loads((corpora.DATA / "tuning8_corpus.json").read_text(encoding="utf-8"))
#: The first look, with the scan as on main 9ba4090 before any change made for this set.
FIRST_LOOK = ("89/230", "4/472")
#: The whole scan's figures on the set now (in-sample: the round's families were tuned on it, docs/security.md §1):
#: at least this many attacks blocked, at most this many notes refused.
BLOCKED_FLOOR = 226
REFUSED_CEILING = 0
#: The languages of the multilingual family (the 26 of the seventh sealed set's description and ours).
LANGUAGES = {"ko", "ar", "he", "hi", "el", "th", "tr", "nl", "vi", "uk", "fa", "cs", "fi", "ro", "hu", "pl", "sv", "id", "fr",
             "es", "de", "ja", "zh", "ru", "pt", "it"}


def test_tuning8_is_large_sourced_and_shares_no_phrasing_with_the_corpora_before_it() -> None:
    attacks, benign = corpora.tuning8_attacks(), corpora.tuning8_benign()
    assert len(attacks) >= 200 and len(benign) >= 400
    assert len(DATA["attacks"]) >= 13 and len(DATA["benign"]["notes"]) >= 14
    assert all(len(v["source"]) >= 80 and len(v["phrasings"]) >= 15 for v in DATA["attacks"].values())
    assert all(len(notes) >= 30 for notes in DATA["benign"]["notes"].values())
    assert all(20 <= len(t) <= 400 for _, t in attacks + benign)
    assert corpora.shared_with([t for _, t in attacks + benign], corpora.tuned_before("tuning8")) == []
    folded = [corpora.fold(t) for _, t in attacks + benign]
    assert len(set(folded)) == len(folded), "a phrasing appears twice in the set"


def test_tuning8_multilingual_attacks_and_notes_span_the_same_26_languages() -> None:
    family = DATA["attacks"]["multilingual"]
    assert len(family["languages"]) == len(family["phrasings"]) and set(family["languages"]) == LANGUAGES
    assert len(DATA["benign"]["notes"]["multilingual_ordinary"]) >= 2 * len(LANGUAGES)


def test_tuning8_is_checked_against_every_tuning_corpus_but_the_seventh_and_eighth_sets_sealed_when_it_was_written() -> None:
    # heldout7 and heldout8 are tuning data since their second looks, but were sealed when tuning8 was written
    assert {"heldout7", "heldout8"} <= set(corpora.TUNING)
    assert corpora.tuned_before("tuning8") == [t for t in corpora.TUNING if t not in ("heldout7", "heldout8", "tuning8")]
    assert corpora.SEALED_WHEN_WRITTEN["tuning8"] == ("heldout7", "heldout8")


def test_the_whole_scan_holds_tuning8_at_its_figures() -> None:
    attacks, benign = corpora.tuning8_attacks(), corpora.tuning8_benign()
    blocked = sum(scan_memory_content(p) is not None for _, p in attacks)
    refused = [(c, find_threats(n)) for c, n in benign if scan_memory_content(n) is not None]
    print(f"\ntuning8: blocked {blocked}/{len(attacks)}, refused {len(refused)}/{len(benign)} {refused}")
    assert blocked >= BLOCKED_FLOOR and len(refused) <= REFUSED_CEILING
