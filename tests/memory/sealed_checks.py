"""The figure tests every sealed held-out set has, made by name: a set's test module gets them with one line.

``globals().update(sealed_checks.figure_tests(SET, first_look=("146/367", "4/568")))`` defines, in the
calling module, the tests that hold the scan at the set's last logged look (names keep the set's
name, so their ids are ``test_<name>_...``): the log has at most two looks labelled before/after and
its first look measured ``first_look``; the overall figures, each attack family and each benign
category hold; the tuning corpora logged with the look hold. Before the first look every one of them
fails naming the command that records it. Failure messages name counts and families, never a text of
the set.
"""

from __future__ import annotations

from collections.abc import Callable
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
