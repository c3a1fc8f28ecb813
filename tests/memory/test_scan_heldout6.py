"""The sixth held-out set of the threat scan (issue 13 §4): its shape now, its figures once looked at.

``data/heldout6_corpus.json`` was written blind (without reading the scan's modules, its model, its
training or augmentation scripts or the texts of any corpus in ``tests/memory/data``) from the styles
of public prompt-injection datasets and write-ups, and committed before the scan was run on it. It is
measured once with the scan as on main and once after the next round of changes
(``python -m tests.memory.heldout6 --record LABEL``, logged in ``data/heldout6_measurements.json``),
spent after its second look: **tuning data now** (in :data:`tests.memory.corpora.TUNING`; the learned
layer trains on it since the retrain on every spent set, docs/security.md §1, its ``--cv`` fold the honest figure, and
``test_scan_classifier.py`` holds the whole scan's in-sample figures on it). The tests check its size, sources, languages and hard negatives and that it
shares no phrasing (case, punctuation and whitespace folded, ``corpora.fold``) with any corpus the
scan was tuned on or with the still-sealed fifth set; once looked at, they hold the scan at the last
logged figures, overall, per attack family and per benign category. Before the first look every
test that needs a figure fails, naming the command that records it: no scan runs on the set until a
look is logged.
"""

from __future__ import annotations

from tests.memory import corpora, heldout6, sealed_checks

#: The families issue 13 §4 asks a sealed set to cover (heldout5's nineteen) plus trigger-conditioned instructions.
FAMILIES = {
    "instruction_override", "role_persona", "fake_markers", "hidden_markup", "encoded_payloads", "prompt_leak",
    "remove_filters", "fake_update", "exfiltration", "context_exfil", "credential_planting", "agent_config_mod",
    "destructive_commands", "c2_botnet", "translate_execute", "persistence_propagation", "social_engineering",
    "multilingual", "agent_tool_hijack", "conditional_trigger",
}  # fmt: skip

#: Checked against every tuning corpus written before it but heldout5, still sealed then (corpora.SEALED_WHEN_WRITTEN): its sister set
#: (heldout7, heldout8 and tuning8 were written after it).
SHAPE = sealed_checks.Shape(frozenset(FAMILIES), min_attacks=360, min_benign=600, min_categories=13,
                            checked_against=frozenset(corpora.TUNING) - {"heldout5", "heldout6", "heldout7", "heldout8", "tuning8"})

globals().update(sealed_checks.shape_tests(heldout6.SET, SHAPE))

globals().update(sealed_checks.figure_tests(heldout6.SET, first_look=("189/417", "5/632")))
