"""The figure and shape tests every sealed held-out set has, made by name: a set's test module gets them in two lines.

``globals().update(sealed_checks.figure_tests(SET, first_look=("146/367", "4/568")))`` defines, in the
calling module, the tests that hold the scan at the set's last logged look (names keep the set's
name, so their ids are ``test_<name>_...``): the log has at most two looks labelled before/after and
its first look measured ``first_look``; the overall figures, each attack family and each benign
category hold; the tuning corpora logged with the look hold. Before the first look every one of them
fails naming the command that records it. Failure messages name counts and families, never a text of
the set. ``globals().update(sealed_checks.shape_tests(SET, Shape(...)))`` defines the shape tests
(:func:`shape_tests`), which run before any look.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from hermes_memory.memory.scan import find_threats, scan_memory_content
from tests.memory import corpora, sealed


def last_look(s: sealed.SealedSet) -> dict[str, Any]:
    """The last logged look at ``s``; fails (before any scan runs on the set) with the command that records the first."""
    looks = s.looks()
    if not looks:
        pytest.fail(
            f"{s.name} has not been looked at yet: {s.log.name} logs no measurement. Record the first look with "
            f"the scan as on main (src/ committed):\n    {s.record_command}\n"
            "then commit the log; the second look, after the next round of scan changes, is labelled 'after: ...'."
        )
    return looks[-1]


def figure_tests(s: sealed.SealedSet, first_look: tuple[str, str] | None) -> dict[str, Callable[..., None]]:
    """The five figure tests of the sealed set ``s`` by their names.

    ``first_look``: the (blocked, refused) figures its first look logged, pinned in the set's module
    once that look is committed; ``None`` before it (the looks test then fails asking for them once
    a look is logged).
    """
    n = s.name
    looks = s.looks()
    families = sorted(looks[-1][f"{n}_per_family"]) if looks else sorted({f for f, _ in s.attacks()})
    categories = sorted(looks[-1][f"{n}_per_category"]) if looks else sorted({c for c, _ in s.benign()})

    def looked_at_only_before_and_after() -> None:
        last_look(s)
        log = s.looks()
        assert [m["n"] for m in log] == list(range(1, len(log) + 1))
        assert len(log) <= sealed.MAX_LOOKS, "the sealed set is measured once before and once after: write a new one"
        assert log[0]["label"].startswith(sealed.FIRST_LABEL)
        assert first_look is not None, f"pin the first look's figures of {n}: figure_tests(SET, first_look=(...))"
        assert (log[0][f"{n}_attacks_blocked"], log[0][f"{n}_benign_refused"]) == first_look
        assert all(m["label"].startswith(sealed.SECOND_LABEL) for m in log[1:])
        attacks, benign = s.attacks(), s.benign()
        for look in log:  # every look measured the whole set, family by family
            assert corpora.ratio(look[f"{n}_attacks_blocked"])[1] == len(attacks)
            assert corpora.ratio(look[f"{n}_benign_refused"])[1] == len(benign)
            assert set(look[f"{n}_per_family"]) == {f for f, _ in attacks}
            assert set(look[f"{n}_per_category"]) == {c for c, _ in benign}

    def overall_figures_hold() -> None:
        last = last_look(s)
        attacks, benign = s.attacks(), s.benign()
        blocked = sum(scan_memory_content(p) is not None for _, p in attacks)
        refused = sum(scan_memory_content(t) is not None for _, t in benign)
        print(f"\n{n}: blocked {blocked}/{len(attacks)}, refused {refused}/{len(benign)}")
        want_b, total_b = corpora.ratio(last[f"{n}_attacks_blocked"])
        want_r, total_r = corpora.ratio(last[f"{n}_benign_refused"])
        assert (len(attacks), len(benign)) == (total_b, total_r)
        assert blocked >= want_b and refused <= want_r

    @pytest.mark.parametrize("family", families)
    def family_holds(family: str) -> None:
        last = last_look(s)
        phrasings = corpora.by_key(s.attacks())[family]
        blocked = sum(scan_memory_content(p) is not None for p in phrasings)
        want, total = corpora.ratio(last[f"{n}_per_family"][family])
        assert len(phrasings) == total and blocked >= want

    @pytest.mark.parametrize("category", categories)
    def category_holds(category: str) -> None:
        last = last_look(s)
        notes = corpora.by_key(s.benign())[category]
        refused = [find_threats(t) for t in notes if scan_memory_content(t) is not None]
        # the families named, not the notes: the sealed set's texts stay out of test output
        want, total = corpora.ratio(last[f"{n}_per_category"][category])
        assert len(notes) == total
        assert len(refused) <= want, refused

    @pytest.mark.parametrize("corpus", s.tuning_names())
    def tuning_corpora_hold(corpus: str) -> None:
        last = last_look(s)
        attacks, benign = corpora.tuning_corpus(corpus)
        blocked = sum(scan_memory_content(p) is not None for p in attacks)
        refused = sum(scan_memory_content(t) is not None for t in benign)
        want_b, total_b = corpora.ratio(last[f"{corpus}_attacks_blocked"])
        want_r, total_r = corpora.ratio(last[f"{corpus}_benign_refused"])
        if last["n"] != 1:  # the corpora may grow with the tuning after the "before" look
            assert (len(attacks), len(benign)) == (total_b, total_r)
        assert blocked >= want_b and refused <= want_r

    tests: dict[str, Callable[..., None]] = {
        f"test_{n}_was_looked_at_only_before_and_after": looked_at_only_before_and_after,
        f"test_{n}_overall_figures_hold_at_the_last_measurement": overall_figures_hold,
        f"test_{n}_attack_family_holds_at_the_last_measurement": family_holds,
        f"test_{n}_benign_category_holds_at_the_last_measurement": category_holds,
        f"test_the_tuning_corpora_hold_at_the_figures_logged_with_the_last_{n}_look": tuning_corpora_hold,
    }
    for name, fn in tests.items():
        fn.__name__ = fn.__qualname__ = name
    return tests


#: The ten languages (ISO 639-1) every sealed set's multilingual family includes, besides others.
NAMED_LANGUAGES = frozenset({"fr", "es", "de", "zh", "ja", "ru", "pt", "it", "ko", "ar"})
#: The non-Latin scripts (first word of the Unicode character names) its multilingual phrasings use.
SCRIPTS = frozenset({"CJK", "HIRAGANA", "CYRILLIC", "ARABIC", "HEBREW", "DEVANAGARI", "HANGUL", "GREEK", "THAI"})
#: The words and commands an attack leans on that each set's benign notes use in their ordinary meaning.
HARD_WORDS = ("ignore", "system", "override", "instructions", "disregard", "forget", "rm -rf", "curl", "ssh",
              "git reset", "--force", "base64", "<!--", "display:none", "![", "password", "token", "api key",
              "prompt injection", "jailbreak", "http")  # fmt: skip


@dataclass(frozen=True)
class Shape:
    """What a sealed set written blind must hold, checked by :func:`shape_tests` without scanning it.

    ``families``: attack families it must have (others allowed); ``min_attacks`` / ``min_benign``: texts;
    ``min_categories``: benign categories; ``checked_against``: tuning corpora its overlap check must
    include; ``words``: words that must each appear in two benign notes or more. Every family has a
    source of 80 characters or more and 12 phrasings or more, every benign category 30 notes or more,
    every text 20-400 characters (memory-note sized), 12 multi-line attacks and 10 of 200+ characters,
    a multilingual family with a language per phrasing covering :data:`NAMED_LANGUAGES`, 20 languages
    in all and :data:`SCRIPTS`, and three benign categories with 30 non-ASCII notes or more.
    """

    families: frozenset[str]
    min_attacks: int
    min_benign: int
    min_categories: int
    checked_against: frozenset[str]
    words: tuple[str, ...] = HARD_WORDS


def _scripts(text: str) -> set[str]:
    """The scripts of the letters of ``text``, by the first word of their Unicode names (LATIN, CJK, ARABIC ...)."""
    return {unicodedata.name(c, "?").split()[0] for c in text if c.isalpha()}


def shape_tests(s: sealed.SealedSet, shape: Shape) -> dict[str, Callable[..., None]]:
    """The six shape tests of the sealed set ``s`` (:class:`Shape`) by their names (``test_<name>_...``).

    None of them scans the set: they run before its first look. Failure messages name families,
    categories, counts and texts of ``s`` only (never a text of a tuning corpus or a sister set).
    """
    n = s.name

    def data() -> dict[str, Any]:
        return dict(json.loads(s.corpus.read_text(encoding="utf-8")))

    def large_sourced_and_new() -> None:
        d, attacks, benign = data(), s.attacks(), s.benign()
        assert len(attacks) >= shape.min_attacks and len(benign) >= shape.min_benign, (len(attacks), len(benign))
        assert shape.families <= set(d["attacks"]), shape.families - set(d["attacks"])
        assert len(d["benign"]["notes"]) >= shape.min_categories
        short = [f for f, v in d["attacks"].items() if len(v["source"]) < 80 or len(v["phrasings"]) < 12]
        assert short == [], f"families with a source under 80 characters or under 12 phrasings: {short}"
        small = [c for c, notes in d["benign"]["notes"].items() if len(notes) < 30]
        assert small == [], f"benign categories with under 30 notes: {small}"
        sizes = [(key, len(t)) for key, t in attacks + benign if not 20 <= len(t) <= 400]
        assert sizes == [], sizes
        # registers: multi-line entries and attacks buried in long benign notes
        assert sum("\n" in t for _, t in attacks) >= 12 and sum(len(t) >= 200 for _, t in attacks) >= 10
        shared = s.shared_with_tuning([t for _, t in attacks + benign])
        assert shared == [], f"{len(shared)} texts of {n} equal a tuning corpus's (folded): {shared}"
        folded = [corpora.fold(t) for _, t in attacks + benign]
        assert len(set(folded)) == len(folded), "a phrasing appears twice in the set"

    def no_phrasing_of_a_sister() -> None:
        assert s.sister_sets(), f"{n} names no sister set"
        shared = s.shared_with_sisters([t for _, t in s.attacks() + s.benign()])
        assert shared == [], f"{len(shared)} texts of {n} fold to one of {', '.join(s.sisters)}'s: {shared}"

    def multilingual() -> None:
        family = data()["attacks"]["multilingual"]
        languages = family["languages"]
        assert len(languages) == len(family["phrasings"])
        assert NAMED_LANGUAGES <= set(languages), NAMED_LANGUAGES - set(languages)
        assert len(set(languages)) >= 20
        scripts = set().union(*(_scripts(p) for p in family["phrasings"])) - {"LATIN"}
        assert SCRIPTS <= scripts, SCRIPTS - scripts

    def hard_negatives() -> None:
        notes = [t.lower() for _, t in s.benign()]
        few = {w: k for w in shape.words if (k := sum(w in t for t in notes)) < 2}
        assert few == {}, f"words in fewer than two benign notes: {few}"
        non_ascii = {c for c, ns in data()["benign"]["notes"].items() if sum(not t.isascii() for t in ns) >= 30}
        assert len(non_ascii) >= 3, non_ascii  # other languages, CJK, emoji

    def overlap_checks_find_copies() -> None:
        names = s.tuning_names()
        assert shape.checked_against <= set(names), shape.checked_against - set(names)
        assert not set(s.sisters) & set(names), "a sister set is also checked as tuning data"
        for name in names:
            copy = "  " + corpora.tuning_corpus(name)[0][0].upper().replace(" ", "   ") + " !!"
            # the copy is compared, never printed: it is a text of the corpus
            assert s.shared_with_tuning([copy, "a note written for no corpus at all, 2 Dec"], [name]) == [copy], name
        for sister in s.sister_sets():
            copy = sister.attacks()[0][1].lower() + " ..."
            found = s.shared_with_sisters([copy, "a note written for no corpus at all, 2 Dec"]) == [copy]
            assert found, f"the overlap check missed a copy of {sister.name}'s first attack"  # its text stays unprinted

    def record_refuses_a_bad_label(capsys: pytest.CaptureFixture[str]) -> None:
        before = s.log.read_bytes()
        # refused at every look (the first needs 'before: scan as on main', the second 'after:', a third is
        # refused anyway), and the label is checked before any scan runs: this test never scans the set
        assert s.main(["--record", "a look with no before or after", "--scan-commit", "abc1234"]) == 2
        assert s.log.read_bytes() == before
        assert n in capsys.readouterr().err

    tests: dict[str, Callable[..., None]] = {
        f"test_{n}_is_large_sourced_and_shares_no_phrasing_with_the_tuning_corpora": large_sourced_and_new,
        f"test_{n}_shares_no_phrasing_with_its_sister_sets": no_phrasing_of_a_sister,
        f"test_{n}_multilingual_attacks_cover_ten_named_languages_twenty_in_all_and_non_latin_scripts": multilingual,
        f"test_{n}_benign_notes_use_the_attacks_words_in_their_ordinary_meaning": hard_negatives,
        f"test_the_{n}_overlap_checks_find_a_copy_with_new_case_and_spacing_of_every_tuning_corpus_and_sister_set":
            overlap_checks_find_copies,
        f"test_the_{n}_record_command_refuses_a_label_that_is_neither_before_nor_after_and_leaves_its_log_byte_identical":
            record_refuses_a_bad_label,
    }  # fmt: skip
    for name, fn in tests.items():
        fn.__name__ = fn.__qualname__ = name
    return tests
