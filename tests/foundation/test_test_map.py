"""The checker of docs/test-map.md (tests/idmap.py) finds a lost, duplicated or unmoved test."""

from __future__ import annotations

import pytest

from tests import idmap

BEFORE = [
    "tests/a/test_review.py::test_one",
    "tests/a/test_review.py::test_two[sqlite]",
    "tests/a/test_review.py::test_two[postgres]",
    "tests/a/test_kept.py::test_kept",
]
AFTER = [
    "tests/a/test_kept.py::test_kept",
    "tests/a/test_one_thing.py::test_one",
    "tests/a/test_other_thing.py::test_two[sqlite]",
    "tests/a/test_other_thing.py::test_two[postgres]",
]


def page(before: list[str], after: list[str]) -> str:
    return idmap.write(before, after)


def test_a_listing_is_read_without_the_summary_line() -> None:
    text = "\n".join(BEFORE) + "\n\n4 tests collected in 0.1s\n"
    assert idmap.read_ids(text) == BEFORE


def test_each_moved_function_is_mapped_with_its_number_of_ids() -> None:
    assert idmap.moves(BEFORE, AFTER) == [
        ("tests/a/test_review.py", "test_one", "tests/a/test_one_thing.py", 1),
        ("tests/a/test_review.py", "test_two", "tests/a/test_other_thing.py", 2),
    ]
    assert idmap.check(page(BEFORE, AFTER), AFTER) == []


def test_a_lost_test_cannot_be_mapped() -> None:
    with pytest.raises(ValueError, match="test_one: 0 new ids"):
        idmap.moves(BEFORE, AFTER[:1] + AFTER[2:])


def test_a_test_defined_twice_cannot_be_mapped() -> None:
    with pytest.raises(ValueError, match="2 new ids"):
        idmap.moves(BEFORE, [*AFTER, "tests/b/test_copy.py::test_one"])


def test_check_names_a_lost_id_an_unmoved_function_and_a_smaller_suite() -> None:
    text = page(BEFORE, AFTER)
    lost = [i for i in AFTER if not i.endswith("[postgres]")]
    problems = idmap.check(text, lost)
    assert "tests/a/test_other_thing.py::test_two: 1 ids collected, 2 before in tests/a/test_review.py" in problems
    assert "3 test ids collected now, 4 before the regrouping" in problems
    back = [*AFTER, "tests/a/test_review.py::test_one"]
    assert "tests/a/test_review.py::test_one is still collected from its old file" in idmap.check(text, back)
