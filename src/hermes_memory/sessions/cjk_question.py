"""The key terms of a Chinese or Japanese question typed the natural way, without spaces.

CJK text has no spaces, so ``记忆断裂是什么意思`` ("what does 记忆断裂 mean") reaches the planner as
one token; searched as one literal it matches only a message that holds the whole question, so it
found nothing although ``记忆断裂`` is stored. The English side drops its question and function
words (``STOPWORDS`` in :mod:`hermes_memory.sessions.fts`); this is the same for CJK: a run of 5 or
more CJK characters is cut at full-width punctuation and at the question phrases below, and the
pieces of 2 or more characters left are searched beside the run itself.

The phrases are multi-character question forms and request openers only (no single particle such
as ``的`` or ``の``, which sit inside ordinary words: ``目的``, ``この``), longest first so that
``是什么意思`` is cut before ``什么``.
"""

from __future__ import annotations

import re

MIN_RUN = 5
"""CJK runs shorter than this are words, searched as typed (``记忆断裂``, ``東京タワー``)."""

_CHINESE = """
    是什么意思 什么意思 是什麼意思 什麼意思 是什么 什么是 是什麼 什麼是 什么 什麼 为什么 為什麼 怎么样 怎麼樣
    怎么办 怎麼辦 怎么 怎麼 如何 哪里 哪裡 哪儿 哪兒 哪个 哪個 什么时候 什麼時候 是不是 有没有 有沒有
    请问 請問 告诉我 告訴我 我想知道 关于 關於 还记得 還記得 记得吗 記得嗎 上次 之前 我们 我們 你们 你們
"""
"""What / why / how / where / when / is it / please / tell me / about / last time (simplified and traditional)."""
_JAPANESE = """
    はどこですか はなんですか はなにですか とはなんですか とは何ですか について教えて について
    ってなに ってなんですか とは 何ですか なんですか ですか でしょうか どこ なぜ どうして どうやって
    どうすれば 教えてください 教えて ありますか ましたか
"""
"""What / where / why / how / is it / about / please tell me (Korean is written with spaces between words)."""
_PHRASES = sorted(set((_CHINESE + _JAPANESE).split()), key=len, reverse=True)
_PUNCT = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
_CUT_RE = re.compile("|".join([f"[{_PUNCT}]+", *map(re.escape, _PHRASES)]))


def key_terms(literal: str) -> list[str]:
    """The pieces of ``literal`` (a CJK token of the query) worth searching beside it: ``[]`` when it
    is shorter than :data:`MIN_RUN` or nothing in it is cut; else each piece of 2+ characters left
    once its punctuation and question phrases are cut out, in order, without repeats."""
    if len(literal) < MIN_RUN:
        return []
    pieces = [p.strip() for p in _CUT_RE.split(literal)]
    kept = list(dict.fromkeys(p for p in pieces if len(p) >= 2 and p != literal))
    return kept
