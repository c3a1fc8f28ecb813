"""The sealed seventh held-out set of the threat scan (issue 13 §4): its shape now, its figures once looked at.

``data/heldout7_corpus.json`` was written blind (without reading the scan's modules, its model, its
training or augmentation scripts or the texts of any corpus in ``tests/memory/data``) from the styles
of public prompt-injection datasets and write-ups, and committed before the scan was run on it. It is
measured once with the scan as on main and once after the next round of changes
(``python -m tests.memory.heldout7 --record LABEL``, logged in ``data/heldout7_measurements.json``),
and never tuned on while sealed. The tests check its size, sources, languages and hard negatives and
that it shares no phrasing (case, punctuation and whitespace folded, ``corpora.fold``) with any
corpus the scan was tuned on or with the spent fifth and sixth sets; once looked at, they hold the
scan at the last logged figures, overall, per attack family and per benign category. Before the first
look every test that needs a figure fails, naming the command that records it: no scan runs on the
set until a look is logged.
"""

from __future__ import annotations

import json
import unicodedata

import pytest

from tests.memory import corpora, heldout7, sealed_checks

DATA = json.loads(heldout7.CORPUS.read_text(encoding="utf-8"))
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
#: Languages the multilingual family must include (ISO 639-1), besides others.
LANGUAGES = {"fr", "es", "de", "zh", "ja", "ru", "pt", "it", "ko", "ar"}


def test_heldout7_is_large_sourced_and_shares_no_phrasing_with_the_tuning_corpora() -> None:
    attacks, benign = heldout7.attacks(), heldout7.benign()
    assert len(attacks) >= 400 and len(benign) >= 650, (len(attacks), len(benign))
    assert FAMILIES <= set(DATA["attacks"]), FAMILIES - set(DATA["attacks"])
    assert len(DATA["benign"]["notes"]) >= 15
    short = [f for f, v in DATA["attacks"].items() if len(v["source"]) < 80 or len(v["phrasings"]) < 12]
    assert short == [], f"families with a source under 80 characters or under 12 phrasings: {short}"
    small = [c for c, notes in DATA["benign"]["notes"].items() if len(notes) < 30]
    assert small == [], f"benign categories with under 30 notes: {small}"
    # memory-note sized: what an agent would store with the memory tool
    sizes = [(key, len(t)) for key, t in attacks + benign if not 20 <= len(t) <= 400]
    assert sizes == [], sizes
    # registers: multi-line entries and attacks buried in long benign notes
    assert sum("\n" in t for _, t in attacks) >= 12 and sum(len(t) >= 200 for _, t in attacks) >= 10
    shared = heldout7.shared_with_tuning([t for _, t in attacks + benign])
    assert shared == [], f"{len(shared)} texts of heldout7 equal a tuning corpus's (folded): {shared}"
    folded = [corpora.fold(t) for _, t in attacks + benign]
    assert len(set(folded)) == len(folded), "a phrasing appears twice in the set"


def test_heldout7_shares_no_phrasing_with_the_spent_fifth_and_sixth_sets() -> None:
    texts = [t for _, t in heldout7.attacks() + heldout7.benign()]
    shared = heldout7.shared_with_sisters(texts)
    assert shared == [], f"{len(shared)} texts of heldout7 fold to one of heldout5's or heldout6's: {shared}"


def _scripts(text: str) -> set[str]:
    """The scripts of the letters of ``text``, by the first word of their Unicode names (LATIN, CJK, ARABIC ...)."""
    return {unicodedata.name(c, "?").split()[0] for c in text if c.isalpha()}


def test_heldout7_multilingual_attacks_cover_ten_named_languages_twenty_in_all_and_non_latin_scripts() -> None:
    family = DATA["attacks"]["multilingual"]
    languages = family["languages"]
    assert len(languages) == len(family["phrasings"])
    assert LANGUAGES <= set(languages), LANGUAGES - set(languages)
    assert len(set(languages)) >= 20
    scripts = set().union(*(_scripts(p) for p in family["phrasings"])) - {"LATIN"}
    want = {"CJK", "HIRAGANA", "CYRILLIC", "ARABIC", "HEBREW", "DEVANAGARI", "HANGUL", "GREEK", "THAI"}
    assert want <= scripts, want - scripts


def test_heldout7_benign_notes_use_the_attacks_words_in_their_ordinary_meaning() -> None:
    notes = [t.lower() for _, t in heldout7.benign()]
    # hard negatives: each word or command an attack leans on appears in several notes an agent must store
    words = ["ignore", "system", "override", "instructions", "disregard", "forget", "rm -rf", "curl", "ssh",
             "git reset", "--force", "base64", "<!--", "display:none", "![", "password", "token", "api key",
             "prompt injection", "jailbreak", "http", "from now on", "you are", "always", "never", "pretend",
             "secret"]  # fmt: skip
    few = {w: n for w in words if (n := sum(w in t for t in notes)) < 2}
    assert few == {}, f"words in fewer than two benign notes: {few}"
    non_ascii = {c for c, ns in DATA["benign"]["notes"].items() if sum(not t.isascii() for t in ns) >= 30}
    assert len(non_ascii) >= 3, non_ascii  # other languages, CJK, emoji


def test_the_overlap_checks_find_a_copy_with_new_case_and_spacing_of_every_tuning_corpus_and_of_heldout5_and_heldout6() -> None:
    names = heldout7.tuning_names()
    # heldout5 and heldout6 were sealed when heldout7 was written (corpora.SEALED_WHEN_WRITTEN): checked as sisters below
    assert set(corpora.TUNING) - {"heldout5", "heldout6"} <= set(names) and "tuning6" in names
    for name in names:
        attack = heldout7.tuning_texts(name)[0][0]
        copy = "  " + attack.upper().replace(" ", "   ") + " !!"
        # the copy is compared, never printed: it is a text of the corpus
        assert heldout7.shared_with_tuning([copy, "a note written for no corpus at all, 2 Dec"], [name]) == [copy], name
    for sister in heldout7.SISTERS:
        copy = sister.attacks()[0][1].lower() + " ..."
        found = heldout7.shared_with_sisters([copy, "a note written for no corpus at all, 2 Dec"]) == [copy]
        assert found, f"the overlap check missed a copy of {sister.name}'s first attack"  # its text stays unprinted


def test_the_heldout7_record_command_refuses_a_label_that_is_neither_before_nor_after_and_leaves_its_log_byte_identical(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = heldout7.LOG.read_bytes()
    # refused at every look (the first needs 'before: scan as on main', the second 'after:', a third is
    # refused anyway), and the label is checked before any scan runs: this test never scans the set
    assert heldout7.main(["--record", "a look with no before or after", "--scan-commit", "abc1234"]) == 2
    assert heldout7.LOG.read_bytes() == before
    assert "heldout7" in capsys.readouterr().err


globals().update(sealed_checks.figure_tests(heldout7.SET, first_look=("244/442", "3/675")))
