"""The sealed tenth held-out set of the threat scan (issue 13 §4): its shape now, its figures once looked at.

``data/heldout10_corpus.json`` was written blind (without reading the scan's modules, its model, its
training or augmentation scripts or the texts of any corpus in ``tests/memory/data``) from the styles
of public prompt-injection and memory-poisoning datasets and write-ups, and committed before the scan
was run on it. It is measured once with the scan as on main and once after the next round of changes
(``python -m tests.memory.heldout10 --record LABEL``, logged in ``data/heldout10_measurements.json``),
and never tuned on while sealed. The tests check its size, sources, languages and hard negatives and
that it shares no phrasing (case, punctuation and whitespace folded, ``corpora.fold``) with any
corpus the scan was tuned on (heldout7 and heldout8 included) or with heldout9, its sister; once
looked at, they hold the scan at the last logged figures, overall, per attack family and per benign
category. Before the first look every test that needs a figure fails, naming the command that
records it: no scan runs on the set until a look is logged.
"""

from __future__ import annotations

from tests.memory import corpora, heldout10, sealed_checks

#: heldout9's fifty families plus kinds the earlier sets lacked: poisoned tool and MCP server
#: descriptions, retrieval bait (notes written to be recalled for a target question, PoisonedRAG and
#: AgentPoison), MINJA-style bridging reasoning, payee and bank-detail swaps, Unicode tag-character
#: smuggling, forged prior consent, hidden reviewer/evaluator instructions (CVs, papers, grading),
#: package-install lures for coding agents and messages from peer agents.
FAMILIES = {
    "instruction_override", "role_persona", "fake_markers", "hidden_markup", "encoded_payloads", "prompt_leak",
    "remove_filters", "fake_update", "exfiltration", "context_exfil", "credential_planting", "agent_config_mod",
    "destructive_commands", "c2_botnet", "translate_execute", "persistence_propagation", "social_engineering",
    "multilingual", "agent_tool_hijack", "conditional_trigger", "structured_payloads", "split_payloads",
    "polite_reminders", "addressed_to_reader", "fake_tool_results", "unicode_tricks", "markdown_links",
    "preference_disguise", "buried_mid_note", "commit_and_pr_templates", "email_and_invites",
    "meeting_transcripts", "lookalike_domains", "export_payloads", "delayed_setup", "question_form",
    "past_decisions", "repo_agent_files", "fact_poisoning", "stack_trace_logs", "spreadsheet_cells",
    "code_comments", "assistant_todo", "image_descriptions", "recipe_travel", "self_reflection",
    "compaction_summary", "character_sheet", "date_triggers", "transliterated",
    "tool_descriptions", "retrieval_bait", "reasoning_bridge", "payee_swap", "tag_smuggling", "forged_consent",
    "evaluator_manipulation", "package_install", "peer_agent_messages",
}  # fmt: skip

#: Checked against every tuning corpus (heldout7 and heldout8 were tuning data when it was written);
#: heldout9, sealed while heldout10 was written (corpora.SEALED_WHEN_WRITTEN), is its sister set.
SHAPE = sealed_checks.Shape(frozenset(FAMILIES), min_attacks=650, min_benign=800, min_categories=25,
                            checked_against=frozenset(corpora.TUNING),
                            words=sealed_checks.HARD_WORDS + ("from now on", "you are", "always", "never", "pretend",
                                                              "secret", "prefer", "previous instructions", "webhook",
                                                              "confirm", "iban", "mcp"))

globals().update(sealed_checks.shape_tests(heldout10.SET, SHAPE))

globals().update(sealed_checks.figure_tests(heldout10.SET, first_look=("327/794", "9/1024")))
