"""The threat scan's keyword gate finds exactly the families whose keywords occur (issue 13 §6).

A family's regex runs only when one of its keywords occurs in the lower-cased text: by definition
``any(k in low for k in keywords)``. The gate computes that in one pass, and for ASCII text with the
ASCII keywords only, split by first character (:class:`hermes_memory.memory.scan._KeywordScan`).
Over every corpus text, every LoCoMo text, their leetspeak views and generated ASCII strings full of
the keywords' symbols, the gate equals the definition, for the plain and the leetspeak keywords.
"""

from __future__ import annotations

import random

import pytest

from hermes_memory.memory import scan
from hermes_memory.memory.scan_text import for_matching, leet_views
from tests.memory import corpora
from tests.memory.test_scan_learned_identity import _corpus_texts


def _by_definition(low: str, keywords: dict[str, tuple[int, ...]]) -> set[int]:
    return {i for k, idxs in keywords.items() if k in low for i in idxs}


@pytest.fixture(scope="module")
def views() -> list[str]:
    texts = _corpus_texts() + [t for _, t in corpora.locomo_notes()]
    rnd = random.Random(6)
    pieces = [*scan._KEYWORD_FAMILIES, " ", " ", "a", "e", ".", "/", "<", "|", "-", "x"]
    texts += ["".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 40))) for _ in range(2000)]
    out = []
    for t in texts:
        norm = for_matching(t)
        out += [norm.lower(), *(v.lower() for v in leet_views(norm))]
    return out


def test_the_gate_equals_one_substring_test_per_keyword(views: list[str]) -> None:
    assert sum(v.isascii() for v in views) > 1000 and sum(not v.isascii() for v in views) > 100  # both paths
    wrong = [v for v in views if scan._keyword_families(v, False) != _by_definition(v, scan._KEYWORD_FAMILIES)]
    assert not wrong, f"{len(wrong)} views, e.g. {wrong[:3]}"


def test_the_leetspeak_gate_equals_one_substring_test_per_keyword(views: list[str]) -> None:
    wrong = [v for v in views if scan._keyword_families(v, True) != _by_definition(v, scan._LEET_KEYWORDS)]
    assert not wrong, f"{len(wrong)} views, e.g. {wrong[:3]}"
