"""The eighth held-out set of the threat scan (issue 13 §4): its shape now, its figures once looked at.

``data/heldout8_corpus.json`` was written blind (without reading the scan's modules, its model, its
training or augmentation scripts or the texts of any corpus in ``tests/memory/data``) from the styles
of public prompt-injection datasets and write-ups, and committed before the scan was run on it. It is
measured once with the scan as on main and once after the next round of changes
(``python -m tests.memory.heldout8 --record LABEL``, logged in ``data/heldout8_measurements.json``),
never tuned on while sealed, and spent after its second look: **tuning data now** (in
:data:`tests.memory.corpora.TUNING`; the learned layer trains on it since the retrain on every spent set,
docs/security.md §1, its ``bench/train_scan_classifier.py --cv`` fold the honest figure, and
``test_scan_classifier.py`` holds the whole scan's figures on it). The tests check its size, sources, languages and hard negatives and
that it shares no phrasing (case, punctuation and whitespace folded, ``corpora.fold``) with any
corpus the scan was tuned on or with the sealed seventh set; once looked at, they hold the scan at
the last logged figures, overall, per attack family and per benign category. Before the first look
every test that needs a figure fails, naming the command that records it: no scan runs on the set
until a look is logged.
"""

from __future__ import annotations

from tests.memory import corpora, heldout8, sealed_checks

#: heldout7's twenty-eight families plus the kinds the earlier sets lacked: instructions buried
#: mid-way in long ordinary notes, commit messages and PR/issue templates, emails and calendar
#: invites, meeting transcripts, look-alike domains, JSON/YAML memory exports, delayed code-word
#: setups, questions, the user's "past decisions", agent instruction files (AGENTS.md, CLAUDE.md)
#: and poisoned facts that steer actions (support numbers, payees).
FAMILIES = {
    "instruction_override", "role_persona", "fake_markers", "hidden_markup", "encoded_payloads", "prompt_leak",
    "remove_filters", "fake_update", "exfiltration", "context_exfil", "credential_planting", "agent_config_mod",
    "destructive_commands", "c2_botnet", "translate_execute", "persistence_propagation", "social_engineering",
    "multilingual", "agent_tool_hijack", "conditional_trigger", "structured_payloads", "split_payloads",
    "polite_reminders", "addressed_to_reader", "fake_tool_results", "unicode_tricks", "markdown_links",
    "preference_disguise", "buried_mid_note", "commit_and_pr_templates", "email_and_invites",
    "meeting_transcripts", "lookalike_domains", "export_payloads", "delayed_setup", "question_form",
    "past_decisions", "repo_agent_files", "fact_poisoning",
}  # fmt: skip

#: Checked against every tuning corpus (heldout5 and heldout6 included: tuning data when heldout8 was
#: written); heldout7, still sealed then (corpora.SEALED_WHEN_WRITTEN), is its sister set instead.
SHAPE = sealed_checks.Shape(frozenset(FAMILIES), min_attacks=500, min_benign=790, min_categories=19,
                            checked_against=frozenset(corpora.TUNING) - {"heldout7", "heldout8", "tuning8"},  # tuning8: written the same day, while heldout8 was sealed
                            words=sealed_checks.HARD_WORDS + ("from now on", "you are", "always", "never", "pretend",
                                                              "secret", "prefer", "previous instructions"))

globals().update(sealed_checks.shape_tests(heldout8.SET, SHAPE))

globals().update(sealed_checks.figure_tests(heldout8.SET, first_look=("210/506", "10/798")))
