"""The learned layer of the threat scan: a linear classifier over n-grams of the normalised text.

The regex families (:mod:`.scan`) are the explainable first layer; they generalise poorly to
phrasings nobody wrote a pattern for (issue 13 §4). This layer scores the same normalised text
(:func:`.scan_text.for_matching`, lower-cased) with a logistic-regression model trained offline by
``bench/train_scan_classifier.py`` (docs/security.md §1, "The learned layer"):

* features (:func:`features`): the *set* of word unigrams, word bigrams, 5-character word stems
  (``instr*``), CJK characters as words (so their bigrams are character bigrams) and runs of two or
  more symbols (``<|``, ``###``, ``-->``); binary, the score divided by the square root of their
  number (an L2-normalised binary vector; never fewer than :data:`MIN_FEATURES`), so a long note
  is not scored higher for its length and a one-word note cannot score on one heavy feature;
* a text over :data:`WINDOW` characters is scored in windows of :data:`WINDOW` characters every
  :data:`STRIDE`, and a text of several lines line by line too (:func:`windows`), and the highest
  window counts: linear time in the text, at most :data:`.scan_text.MAX_SCAN_CHARS` characters.
  An attack sentence inside one long line of benign prose is diluted by the prose around it in
  its window (the regex families still match it anywhere);
* a refusal names a family (``learned:<family>``): the family whose n-grams contribute most to the
  score (each kept n-gram carries the attack family it is most frequent in) and the n-grams that
  pushed the score up the most.

The weights ship as package data (``scan_model.json.gz``, a few hundred KB); inference is pure
Python (one dict lookup per feature). The model file is loaded on first use.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat
from pathlib import Path

__all__ = [
    "MODEL_PATH", "STRIDE", "WINDOW", "LearnedHit", "Model", "features", "features_of", "iter_window_features", "learned_hit",
    "load_model", "score", "window_features", "windows",
]

#: The shipped weights (written by ``bench/train_scan_classifier.py``).
MODEL_PATH = Path(__file__).with_name("scan_model.json.gz")
#: Window and stride (chars) for texts longer than one window: memory entries are mostly 100-300 chars.
WINDOW = 320
STRIDE = 160

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
#: A CJK character alone, a run of other word characters, or a run of 2+ symbols.
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]{{2,}}")
#: Tokens at least this long also give their stem (first :data:`_STEM` chars + ``*``).
_STEM = 5


def features(low: str) -> set[str]:
    """The binary features of ``low`` (normalised, lower-cased text): unigrams, bigrams, stems, symbol runs."""
    return features_of(_TOKEN.findall(low))


def features_of(toks: list[str]) -> set[str]:
    """:func:`features` of a text whose tokens (``_TOKEN.findall``) are ``toks``.

    The set is filled in one fixed order (tokens, bigrams, stems), which every path here keeps:
    a set's iteration order, and so the float sum of a window's weights, follows its insertions.
    """
    out = set(toks)
    out.update(map(" ".join, zip(toks, toks[1:], strict=False)))
    out.update([t[:_STEM] + "*" for t in toks if len(t) > _STEM and t.isalpha()])
    return out


@dataclass(frozen=True)
class Model:
    """A trained model: ``weights`` (feature -> weight), ``bias``, ``threshold`` (a window with a higher
    score is an attack), ``family_of`` (feature -> index in ``families``), ``families`` (names)."""

    weights: dict[str, float]
    bias: float
    threshold: float
    family_of: dict[str, int]
    families: tuple[str, ...]
    meta: dict


def load_model(path: Path = MODEL_PATH) -> Model:
    """Read a model file written by the training script. Raises ``OSError``/``ValueError`` on a bad file."""
    data = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
    feats: list[str] = data["features"]
    scale = float(data["scale"])
    weights = {f: w * scale for f, w in zip(feats, data["weights"], strict=True)}
    family_of = {f: k for f, k in zip(feats, data["family_of"], strict=True) if k >= 0}
    return Model(weights, float(data["bias"]), float(data["threshold"]), family_of, tuple(data["families"]), data.get("meta", {}))


@lru_cache(maxsize=1)
def _shipped() -> Model:
    return load_model()


#: The norm of a window's features never counts fewer than this many: a one-word note ("c", "ok")
#: cannot score on a single heavy feature (memory entries hold about 20-60 features).
MIN_FEATURES = 16


def norm(n_features: int) -> float:
    """The divisor of a window with ``n_features`` features: ``sqrt(max(n, MIN_FEATURES))``."""
    return math.sqrt(max(n_features, MIN_FEATURES))


def _window_score(model: Model, feats: set[str]) -> float:
    if not feats:
        return model.bias
    # The weights in the set's order, summed in C (no list): the same floats in the same order as
    # ``sum([get(f, 0.0) for f in feats])``, so the same bits.
    return model.bias + sum(map(model.weights.get, feats, repeat(0.0))) / norm(len(feats))


def _spans(low: str) -> list[str]:
    """``low`` itself, or its windows of :data:`WINDOW` chars every :data:`STRIDE` (the last one reaches the end)."""
    if len(low) <= WINDOW:
        return [low]
    return [low[i: i + WINDOW] for i in range(0, len(low) - WINDOW + STRIDE, STRIDE)]


def windows(low: str) -> list[str]:
    """The texts scored for ``low``: its windows (:func:`_spans`) and, when it has several lines,
    the windows of each non-blank line too (a line planted among others is not diluted by them).
    At most about ``2 * len(low) / STRIDE + lines`` windows: linear in the text."""
    out = _spans(low)
    if "\n" in low:
        for line in low.split("\n"):
            if line.strip():
                out += _spans(line)
    return out


def score(low: str, model: Model | None = None) -> float:
    """The highest window score of ``low`` (normalised, lower-cased text); above ``model.threshold`` is an attack."""
    m = model or _shipped()
    return max(_window_score(m, feats) for feats in iter_window_features(low))


def _line_features(low: str, lines: list[str]) -> Iterator[set[str]]:
    """:func:`features` of ``low`` (one window) and of each non-blank line of ``lines``
    (``low.split("\\n")``), from one tokenisation.

    A token never holds a line break, so the tokens of ``low`` are its lines' tokens end to end, and a
    line's features are cut from the whole text's tokens, bigrams and stems. Each set is filled in
    :func:`features_of`'s order (tokens, bigrams, stems, each in text order): a set iterates in the
    order of its insertions, so each window's float sum, and its score, are bit-identical.
    """
    per_line = [_TOKEN.findall(line) for line in lines]
    toks = [t for lt in per_line for t in lt]
    bigrams = list(map(" ".join, zip(toks, toks[1:], strict=False)))
    stems = [t[:_STEM] + "*" if len(t) > _STEM and t.isalpha() else "" for t in toks]
    out = set(toks)
    out.update(bigrams)
    out.update(filter(None, stems))
    yield out
    k = 0
    for line, lt in zip(lines, per_line, strict=True):
        n = len(lt)
        if line.strip():
            feats = set(lt)
            feats.update(bigrams[k: k + n - 1] if n else ())
            feats.update(filter(None, stems[k: k + n]))
            yield feats
        k += n


def iter_window_features(low: str) -> Iterator[set[str]]:
    """``features(w) for w in windows(low)``, one set at a time, in that order.

    A text of one window and several lines (the usual multi-line memory entry) is tokenised once
    (:func:`_line_features`) instead of once for the text and once more per line. The windows of a
    longer text are tokenised each on its own (``findall`` in C over overlapping windows costs less
    than cutting 160-char windows from one tokenisation in Python: measured on the 64 KiB
    adversarial strings, docs/benchmarks.md, "Reading the figures"). The sets equal the per-window ones
    and are filled in the same order, so scores are bit-identical
    (``tests/memory/test_scan_learned_identity.py`` checks it against the original code).
    """
    if len(low) <= WINDOW:
        if "\n" in low:
            yield from _line_features(low, low.split("\n"))
        else:
            yield features(low)
        return
    for w in windows(low):
        yield features(w)


def window_features(low: str) -> list[set[str]]:
    """``[features(w) for w in windows(low)]``: :func:`iter_window_features` as a list."""
    return list(iter_window_features(low))


@dataclass(frozen=True)
class LearnedHit:
    """A refusal of the learned layer: ``family`` (``learned:<name>``), ``score`` and ``threshold``
    (logits), ``top`` (the n-grams that raised the score most, highest first)."""

    family: str
    score: float
    threshold: float
    top: tuple[str, ...]


def learned_hit(low: str, model: Model | None = None) -> LearnedHit | None:
    """``None`` when every window of ``low`` scores at or below the threshold, else the explained hit
    (the highest window's family and top n-grams)."""
    m = model or _shipped()
    if len(low) <= WINDOW and "\n" not in low:  # one window (most notes): no generator
        best_feats = features(low)
        best = _window_score(m, best_feats)
    else:
        best = -math.inf
        best_feats = set()
        for feats in iter_window_features(low):
            s = _window_score(m, feats)
            if s > best:
                best, best_feats = s, feats
    if best <= m.threshold:
        return None
    contrib = sorted(((m.weights[f], f) for f in best_feats if m.weights.get(f, 0.0) > 0), reverse=True)
    per_family = [0.0] * len(m.families)
    for weight, f in contrib:
        k = m.family_of.get(f)
        if k is not None:
            per_family[k] += weight
    fam = m.families[per_family.index(max(per_family))] if m.families and max(per_family) > 0 else "injection"
    return LearnedHit(f"learned:{fam}", round(best, 3), round(m.threshold, 3), tuple(f for _, f in contrib[:5]))
