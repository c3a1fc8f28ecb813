"""The seventh held-out set of the threat scan (issue 13 §4): its shape now, its figures once looked at.

``data/heldout7_corpus.json`` was written blind (without reading the scan's modules, its model, its
training or augmentation scripts or the texts of any corpus in ``tests/memory/data``) from the styles
of public prompt-injection datasets and write-ups, and committed before the scan was run on it. It is
measured once with the scan as on main and once after the next round of changes
(``python -m tests.memory.heldout7 --record LABEL``, logged in ``data/heldout7_measurements.json``),
never tuned on while sealed, and spent after its second look: **tuning data now** (in
:data:`tests.memory.corpora.TUNING`; the learned layer trains on it since the retrain on every spent set,
docs/security.md §1, its ``bench/train_scan_classifier.py --cv`` fold the honest figure, and
``test_scan_classifier.py`` holds the whole scan's figures on it). The tests check its size, sources, languages and hard negatives and
that it shares no phrasing (case, punctuation and whitespace folded, ``corpora.fold``) with any
corpus the scan was tuned on or with the spent fifth and sixth sets; once looked at, they hold the
scan at the last logged figures, overall, per attack family and per benign category. Before the first
look every test that needs a figure fails, naming the command that records it: no scan runs on the
set until a look is logged.
"""

from __future__ import annotations

from tests.memory import corpora, heldout7, sealed_checks

#: heldout6's twenty families plus the kinds the earlier sets lacked: instructions in tables, code
#: blocks and configs, split payloads, polite reminders, text addressed to the reading agent, forged
#: tool results and memory headers, unicode tricks, markdown link/alt text, attacks posing as preferences.
FAMILIES = {
    "instruction_override", "role_persona", "fake_markers", "hidden_markup", "encoded_payloads", "prompt_leak",
    "remove_filters", "fake_update", "exfiltration", "context_exfil", "credential_planting", "agent_config_mod",
    "destructive_commands", "c2_botnet", "translate_execute", "persistence_propagation", "social_engineering",
    "multilingual", "agent_tool_hijack", "conditional_trigger", "structured_payloads", "split_payloads",
    "polite_reminders", "addressed_to_reader", "fake_tool_results", "unicode_tricks", "markdown_links",
    "preference_disguise",
}  # fmt: skip

#: heldout5 and heldout6 were spent but not yet tuning data when heldout7 was written (corpora.SEALED_WHEN_WRITTEN): its sister sets
#: (heldout8 and tuning8 were written after it, while it was sealed; both, and heldout7 itself, are tuning data since).
SHAPE = sealed_checks.Shape(frozenset(FAMILIES), min_attacks=400, min_benign=650, min_categories=15,
                            checked_against=frozenset(corpora.TUNING) - {"heldout5", "heldout6", "heldout7", "heldout8", "tuning8"},
                                 words=sealed_checks.HARD_WORDS + ("from now on", "you are", "always", "never", "pretend", "secret"))

globals().update(sealed_checks.shape_tests(heldout7.SET, SHAPE))

globals().update(sealed_checks.figure_tests(heldout7.SET, first_look=("244/442", "3/675")))
