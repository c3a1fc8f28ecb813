"""The learned layer's one-pass feature extraction equals the original per-window code (issue 13 §6).

:mod:`hermes_memory.memory.scan_learned` tokenises a multi-line entry once and cuts its lines'
features from those tokens; :mod:`tests.memory.learned_reference` keeps the original code, which
tokenises the text and then every line again. Over every text of every corpus in
``tests/memory/data`` (the sealed sets excepted, every ``heldout*`` file that is not tuning data,
:data:`tests.memory.corpora.TUNING`: nobody on the scan reads them),
every LoCoMo text, the 64 KiB adversarial strings and generated multi-line texts, the two give
the same feature sets *iterated in the same order* (a set's order decides the float sum), the same
scores to the bit, the same explained hits, and the whole scan the same refusals.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest

from hermes_memory.memory import scan
from hermes_memory.memory.scan_learned import learned_hit, score, window_features
from hermes_memory.memory.scan_text import for_matching
from tests.memory import corpora
from tests.memory import learned_reference as ref
from tests.memory.adversarial import adversarial_texts


def _strings(node: object) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)


def _corpus_texts() -> list[str]:
    """Every string of every JSON file in tests/memory/data but the sealed sets' (``heldoutN_*`` not in corpora.TUNING)."""
    out: list[str] = []
    for path in sorted(corpora.DATA.glob("*.json")):
        if path.name.startswith("heldout") and path.name.split("_")[0] not in corpora.TUNING:
            continue
        out += _strings(json.loads(path.read_text(encoding="utf-8")))
    return out


def _generated(texts: list[str]) -> list[str]:
    """Multi-line entries made of corpus texts (blank, indented and long lines among them) and
    random strings of words, CJK, symbols and line breaks: every path of the extraction."""
    rnd = random.Random(13)
    short = [t for t in texts if len(t) < 200]
    out = ["\n".join(rnd.sample(short, rnd.randint(2, 4))) for _ in range(400)]
    out += ["\n\n  \n".join(rnd.sample(short, 2)) + "\n" for _ in range(100)]
    out += ["\n".join(rnd.sample(texts, 6)) for _ in range(100)]  # over one window, several lines
    alphabet = ["ignore", "previous", "instructions", "x", "1", " ", " ", "\n", "\t", "!", "#", "<|", "-->", "漢", "字",
                "・", "ー", "。", "、", "?", "！", "é", "\u3000", "\u00a0", "\r"]
    out += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 160))) for _ in range(1500)]
    return out


@pytest.fixture(scope="module")
def texts() -> list[str]:
    base = _corpus_texts() + [t for _, t in corpora.locomo_notes()]
    return base + _generated(base) + list(adversarial_texts().values())


def test_window_features_equal_the_per_window_code_in_content_and_order(texts: list[str]) -> None:
    diff = []
    for text in texts:
        low = for_matching(text).lower()
        new, old = window_features(low), ref.window_features(low)
        if [list(s) for s in new] != [list(s) for s in old]:
            diff.append(low[:120])
    assert not diff, f"{len(diff)} of {len(texts)} texts differ, e.g. {diff[:3]}"


def test_scores_and_hits_are_bit_identical(texts: list[str]) -> None:
    diff = []
    for text in texts:
        low = for_matching(text).lower()
        if score(low).hex() != ref.score(low).hex() or learned_hit(low) != ref.learned_hit(low):
            diff.append(low[:120])
    assert not diff, f"{len(diff)} of {len(texts)} texts score otherwise, e.g. {diff[:3]}"


def test_the_whole_scan_refuses_the_same_texts_with_the_same_words(texts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    sample = [t for t in texts if len(t) <= 4096]
    new = [scan._scan(t) for t in sample]
    monkeypatch.setattr(scan, "learned_hit", ref.learned_hit)
    old = [scan._scan(t) for t in sample]
    assert sum(r is not None for r in old) > 100  # the corpora hold refusals, so this compares refusals
    assert new == old
