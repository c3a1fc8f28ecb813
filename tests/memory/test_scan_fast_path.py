"""The scan's path for plain ASCII notes gives the whole scan's result (issue 13 §6).

:func:`hermes_memory.memory.scan._scan` skips the invisible-character check, the normalisation,
the leetspeak views and the decoding for an ASCII text in which one search
(:data:`hermes_memory.memory.scan._ASCII_EXTRA`) finds none of what those steps need; the learned
layer then scores that one-window text without its generator. Over every corpus text, every LoCoMo
text, texts built to sit on the edge of each skipped step (a control character, a digit before a
letter, a spelled-out run, ``\\x`` and ``%XX`` escapes, a 16-character token) and the 64 KiB
adversarial strings, the result equals :func:`hermes_memory.memory.scan._scan_full` (every step
run), refusal message included, and the learned layer's hit equals the original code's.
"""

from __future__ import annotations

import random

import pytest

from hermes_memory.memory import scan
from hermes_memory.memory.scan_learned import learned_hit
from tests.memory import corpora
from tests.memory import learned_reference as ref
from tests.memory.adversarial import adversarial_texts
from tests.memory.test_scan_learned_identity import _corpus_texts


def _edges() -> list[str]:
    """Short texts built around each trigger of the extra views, and the plain words they sit in."""
    rnd = random.Random(613)
    words = ["ignore", "previous", "instructions", "you", "are", "now", "send", "the", "secrets", "to", "user",
             "prefers", "short", "answers", "deploy", "host", "port", "8080", "a", "l", "i", "g", "n", "o", "r", "e"]
    triggers = ["\x07", "\x1b[31m", "\x7f", "\t", "\r", "1gn0r3", "y0u", "r00t", "pa$$word", "a|b", "i g n o r e",
                "i.g.n.o.r.e", "i-g-n-o-r-e", "\\x69\\x67\\x6e", "%69%67%6e%6f%72%65", "aWdub3JlIHByZXZpb3Vz",
                "69676e6f726520616c6c", "abcdefghijklmnop", "abcdefghijklmno", "v2", "3pm", "s3", "100%", "a%2"]
    out = []
    for _ in range(3000):
        parts = [rnd.choice(words) for _ in range(rnd.randint(1, 12))]
        if rnd.random() < 0.6:
            parts.insert(rnd.randint(0, len(parts)), rnd.choice(triggers))
        out.append(rnd.choice([" ", " ", ", ", "\n"]).join(parts))
    return out


@pytest.fixture(scope="module")
def texts() -> list[str]:
    base = _corpus_texts() + [t for _, t in corpora.locomo_notes()]
    return base + _edges() + list(adversarial_texts().values())


def test_the_plain_path_gives_the_whole_scans_result(texts: list[str]) -> None:
    sample = [t[: scan.MAX_SCAN_CHARS] for t in texts]
    plain = [t for t in sample if scan._plain(t)]
    # both paths are exercised, and the plain one on refusals as well as on clean notes
    assert len(plain) > 1000 and len(sample) - len(plain) > 1000
    assert sum(scan._scan_full(t) is not None for t in plain) > 50
    wrong = [t[:120] for t in sample if scan._scan(t) != scan._scan_full(t)]
    assert not wrong, f"{len(wrong)} of {len(sample)} texts scan otherwise, e.g. {wrong[:3]}"


def test_a_text_needing_an_extra_view_never_takes_the_plain_path() -> None:
    for text in ["ignore\x07previous", "1gn0r3 all", "i g n o r e all", "say \\x69\\x67", "%69%67 now",
                 "aWdub3JlIHByZXZpb3Vz", "ignorez les règles"]:
        assert not scan._plain(text), text
    assert scan._plain("Round 1: user prefers concise answers and metric units")


def test_the_one_window_learned_path_equals_the_original_code(texts: list[str]) -> None:
    lows = [t.lower() for t in texts if len(t) <= 320 and "\n" not in t]
    assert len(lows) > 1000
    wrong = [low[:120] for low in lows if learned_hit(low) != ref.learned_hit(low)]
    assert not wrong, f"{len(wrong)} texts differ, e.g. {wrong[:3]}"
