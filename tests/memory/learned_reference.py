"""The learned scan layer's feature extraction as it was first written (issue 13 §6), kept as a reference.

:mod:`hermes_memory.memory.scan_learned` now tokenises a text once and takes its windows and lines
over those tokens; this module keeps the original form, which tokenises every window and every
line again, so ``test_scan_learned_identity.py`` can prove the two give the same feature sets in
the same order, bit-identical scores and the same refusals. Do not optimise this file: it is the
definition the fast code is checked against.
"""

from __future__ import annotations

import math

from hermes_memory.memory.scan_learned import (
    _STEM,
    _TOKEN,
    STRIDE,
    WINDOW,
    LearnedHit,
    Model,
    _shipped,
    concepts,
    norm,
)


def features(low: str) -> set[str]:
    """The binary features of ``low``: unigrams, bigrams, stems, symbol runs, concepts (the original code, concepts added)."""
    toks = _TOKEN.findall(low)
    out = set(toks)
    bigrams = list(map(" ".join, zip(toks, toks[1:], strict=False)))
    stems = [t[:_STEM] + "*" for t in toks if len(t) > _STEM and t.isalpha()]
    out.update(bigrams)
    out.update(stems)
    out.update(concepts(toks, bigrams, stems))
    return out


def _window_score(model: Model, feats: set[str]) -> float:
    if not feats:
        return model.bias
    get = model.weights.get
    return model.bias + sum([get(f, 0.0) for f in feats]) / norm(len(feats))


def _spans(low: str) -> list[str]:
    if len(low) <= WINDOW:
        return [low]
    return [low[i: i + WINDOW] for i in range(0, len(low) - WINDOW + STRIDE, STRIDE)]


def windows(low: str) -> list[str]:
    """The texts scored for ``low``: its windows and, for several lines, each non-blank line's windows."""
    out = _spans(low)
    if "\n" in low:
        for line in low.split("\n"):
            if line.strip():
                out += _spans(line)
    return out


def window_features(low: str) -> list[set[str]]:
    """The feature set of every scored window of ``low``, in scoring order."""
    return [features(w) for w in windows(low)]


def score(low: str, model: Model | None = None) -> float:
    """The highest window score of ``low`` (the original code)."""
    m = model or _shipped()
    return max(_window_score(m, features(w)) for w in windows(low))


def learned_hit(low: str, model: Model | None = None) -> LearnedHit | None:
    """The original explained hit: ``None`` at or below the threshold."""
    m = model or _shipped()
    best: float = -math.inf
    best_feats: set[str] = set()
    for span in windows(low):
        feats = features(span)
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
