"""Train the learned layer of the memory threat scan (issue 13 §4; docs/security.md §1, "The learned layer").

Reads the tuning corpora of the scan (``tests/memory/data``: attack_corpus, benign_notes, dev,
heldout, heldout2), LoCoMo conversations 0-2 (``../shared/data/locomo``; 3-4 are validation and
never trained on) and the augmentation of ``bench/scan_augment.py``; trains an L2-regularised,
class-balanced logistic regression (full-batch Adam, fixed iteration count, no randomness
outside the seeded augmentation) over :func:`hermes_memory.memory.scan_learned.features`; keeps
the :data:`KEEP` heaviest features and trains again on them alone (the shipped model is exactly
that second fit); sets the threshold at the highest benign training score plus :data:`MARGIN`
(logits), and writes ``src/hermes_memory/memory/scan_model.json.gz`` (byte-identical on every
run: sorted features, integer weights, gzip without a timestamp).

``--cv`` prints, as JSON, grouped cross-validation instead: leave-one-corpus-out (train without a
corpus, both its attacks and its notes, and test on it) and leave-one-family-out (train without
every attack of one family, test on that family's real attacks), each for the learned layer alone
and for the whole scan (regexes OR learned), plus the LoCoMo 3-4 refusals of every fold. The family
folds keep every note, so they keep the shipped model's threshold (one fit per fold).

Usage: ``python bench/train_scan_classifier.py [--out PATH] [--cv [--cv-only corpora|families]]``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "memory"))
sys.path.insert(0, str(ROOT / "bench"))

import corpora  # noqa: E402
import scan_augment  # noqa: E402

from hermes_memory.memory.scan import find_threats  # noqa: E402
from hermes_memory.memory.scan_learned import MODEL_PATH, Model, features, load_model, norm, score, windows  # noqa: E402
from hermes_memory.memory.scan_text import for_matching  # noqa: E402

SEED = 13
#: Features kept after the first fit (by absolute weight).
KEEP = 24_000
#: L2 penalty per unit of (class-balanced) sample weight; Adam step and iterations.
L2 = 3e-6
LR = 0.2
ITERS = 600
#: Threshold = max(highest benign training score, OOF_QUANTILE of the out-of-fold benign scores) + MARGIN (logits), over INNER_FOLDS folds of the training texts.
MARGIN = 0.25
INNER_FOLDS = 4
#: The out-of-fold benign quantile the threshold sits above (the highest 0.1 % are outliers the
#: regex layer's cues are for: quoted attacks, language glosses).
OOF_QUANTILE = 0.999
#: The learned families a refusal names, and the corpus families each stands for.
FAMILY_MAP = {
    "ignore_override": ["ignore_previous", "ignore_paraphrase", "ignore_override"],
    "multilingual": ["ignore_previous_french", "ignore_previous_spanish", "ignore_previous_german", "ignore_previous_chinese",
                     "other_languages", "multilingual"],
    "role_persona": ["role_reassignment", "role_persona"],
    "remove_filters": ["remove_filters"],
    "fake_markers": ["fake_system_markers", "fake_update", "fake_markers", "fake_markers_delimiters", "hidden_markup_and_config"],
    "prompt_leak": ["prompt_leak"],
    "encoded": ["encoded_payloads", "leetspeak", "encoded_obfuscated"],
    "exfiltration": ["exfiltration", "exfiltration_indirect"],
    "agent_hijack": ["destructive_as_instruction", "c2_payload_user_md", "deception_and_hiding", "agent_tool_hijack", "tool_permission_hijack"],
}
FAMILIES = tuple(FAMILY_MAP)
_FAMILY_OF = {src: fam for fam, srcs in FAMILY_MAP.items() for src in srcs}


@dataclass(frozen=True)
class Doc:
    """One training text: ``label`` 1 attack / 0 benign, ``family`` (learned family or ``""``), ``group`` (its corpus)."""

    text: str
    label: int
    family: str
    group: str


def load_docs() -> list[Doc]:
    """Every tuning text, tagged with its corpus group (augmentation is the group ``augment``)."""
    docs: list[Doc] = []
    docs += [Doc(p, 1, _FAMILY_OF.get(f, ""), "original") for f, p in corpora.attack_phrasings()]
    docs += [Doc(n, 0, "", "original") for _, n in corpora.own_benign_notes()]
    docs += [Doc(n, 0, "", "locomo") for _, n in corpora.locomo_notes(conversations=range(3))]
    dev_a, dev_b = corpora.dev_set()
    docs += [Doc(p, 1, "", "dev") for p in dev_a] + [Doc(n, 0, "", "dev") for n in dev_b]
    docs += [Doc(p, 1, _FAMILY_OF.get(f, ""), "heldout") for f, p in corpora.heldout_attacks()]
    docs += [Doc(n, 0, "", "heldout") for _, n in corpora.heldout_benign()]
    docs += [Doc(p, 1, _FAMILY_OF.get(f, ""), "heldout2") for f, p in corpora.heldout2_attacks()]
    docs += [Doc(n, 0, "", "heldout2") for _, n in corpora.heldout2_benign()]
    docs += [Doc(t, 1, f, "augment") for f, t in scan_augment.attacks(SEED)]
    docs += [Doc(t, 0, "", "augment") for _, t in scan_augment.benign(SEED)]
    return docs


def validation_notes() -> list[str]:
    """LoCoMo conversations 3-4: benign validation notes, never trained on."""
    return [n for _, n in corpora.locomo_notes(conversations=range(3, 5))]


def _views(text: str) -> list[str]:
    """The windows the classifier scores (the same windows as at inference). The corpora write every
    attacker host as ``*.invalid`` (and notes use ``example.com``): trained as written, "invalid"
    would become an attack word, so the reserved TLD is read as ``.com`` here."""
    return windows(for_matching(text).lower().replace(".invalid", ".com"))


def _whole_views(text: str) -> list[str]:
    """The windows of ``text`` as a whole (without the per-line windows of :func:`_views`)."""
    low = for_matching(text).lower().replace(".invalid", ".com")
    return windows(low.replace("\n", " ")) if "\n" in low else windows(low)


def _with_noise(docs: list[Doc]) -> list[Doc]:
    """Each attack once more with typo/leetspeak/hyphen/upper-case noise (seeded)."""
    rng = random.Random(SEED)
    return docs + [Doc(scan_augment.noisy(d.text, rng), 1, d.family, d.group) for d in docs if d.label == 1]


@dataclass
class _Matrix:
    idx: np.ndarray  # feature index of every non-zero
    ptr: np.ndarray  # row starts (len rows + 1)
    val: np.ndarray  # 1/sqrt(row length) for each non-zero
    y: np.ndarray
    sw: np.ndarray  # sample weight (class-balanced)


def _matrix(rows: list[tuple[set[str], int]], vocab: dict[str, int]) -> _Matrix:
    idx: list[int] = []
    ptr = [0]
    val: list[float] = []
    for feats, _ in rows:
        n = len(feats)
        ids = sorted(vocab[f] for f in feats if f in vocab)
        idx += ids
        val += [1.0 / norm(n)] * len(ids) if n else []
        ptr.append(len(idx))
    y = np.array([lab for _, lab in rows], dtype=np.float64)
    pos = max(1.0, y.sum())
    neg = max(1.0, len(y) - y.sum())
    sw = np.where(y == 1, len(y) / (2 * pos), len(y) / (2 * neg))
    return _Matrix(np.array(idx, dtype=np.int64), np.array(ptr, dtype=np.int64), np.array(val), y, sw)


def _margins(m: _Matrix, w: np.ndarray, b: float) -> np.ndarray:
    rows = np.repeat(np.arange(len(m.y)), np.diff(m.ptr))
    return np.bincount(rows, weights=w[m.idx] * m.val, minlength=len(m.y)) + b


def _fit(m: _Matrix, dim: int) -> tuple[np.ndarray, float]:
    """Class-balanced L2 logistic regression by full-batch Adam (deterministic)."""
    w = np.zeros(dim)
    b = 0.0
    mw = np.zeros(dim)
    vw = np.zeros(dim)
    mb = vb = 0.0
    rows = np.repeat(np.arange(len(m.y)), np.diff(m.ptr))
    n = m.sw.sum()
    for t in range(1, ITERS + 1):
        z = np.bincount(rows, weights=w[m.idx] * m.val, minlength=len(m.y)) + b
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        r = (p - m.y) * m.sw / n
        gw = np.bincount(m.idx, weights=r[rows] * m.val, minlength=dim) + L2 * w
        gb = r.sum()
        mw = 0.9 * mw + 0.1 * gw
        vw = 0.999 * vw + 0.001 * gw * gw
        mb = 0.9 * mb + 0.1 * gb
        vb = 0.999 * vb + 0.001 * gb * gb
        c1, c2 = 1 - 0.9 ** t, 1 - 0.999 ** t
        w -= LR * (mw / c1) / (np.sqrt(vw / c2) + 1e-8)
        b -= LR * (mb / c1) / (np.sqrt(vb / c2) + 1e-8)
    return w, b


def train(docs: list[Doc]) -> Model:
    """The model trained on ``docs``, its threshold above the out-of-fold benign scores (:func:`_oof_benign_max`)."""
    model = _train_fixed(docs, 0.0)
    oof = _oof_benign_max(docs)
    threshold = round(max(oof, model.meta["benign_max"]) + MARGIN, 4)
    return Model(model.weights, model.bias, threshold, model.family_of, model.families,
                 {**model.meta, "oof_benign_max": round(oof, 4)})


def _oof_benign_max(docs: list[Doc]) -> float:
    """The :data:`OOF_QUANTILE` quantile of the scores of benign texts by models that did not see them
    (:data:`INNER_FOLDS` folds, seeded split): what a note nobody trained on may score."""
    order = list(range(len(docs)))
    random.Random(SEED).shuffle(order)
    fold = {i: k % INNER_FOLDS for k, i in enumerate(order)}
    scores: list[float] = []
    for k in range(INNER_FOLDS):
        model = _train_fixed([d for i, d in enumerate(docs) if fold[i] != k], 0.0)
        scores += [score(for_matching(d.text).lower(), model) for i, d in enumerate(docs) if fold[i] == k and d.label == 0]
    return float(np.quantile(np.array(scores), OOF_QUANTILE))


def _train_fixed(docs: list[Doc], margin: float) -> Model:
    """Two fits (all features seen twice or more, then the :data:`KEEP` heaviest); threshold = benign max + ``margin``."""
    docs = _with_noise(docs)
    rows: list[tuple[set[str], int]] = []
    fam_rows: list[str] = []
    for d in docs:
        # An attack's rows are its windows as a whole; a note's rows are every window scored at
        # inference (its lines too), so no line of a note is left to score high.
        for v in _views(d.text) if d.label == 0 else _whole_views(d.text):
            rows.append((features(v), d.label))
            fam_rows.append(d.family)
    df: dict[str, int] = {}
    for feats, _ in rows:
        for f in feats:
            df[f] = df.get(f, 0) + 1
    vocab = {f: i for i, f in enumerate(sorted(f for f, c in df.items() if c >= 2))}
    w, b = _fit(_matrix(rows, vocab), len(vocab))
    names = sorted(vocab)
    order = np.argsort(-np.abs(w), kind="stable")[:KEEP]
    kept = sorted(names[i] for i in order if w[i] != 0.0)
    vocab = {f: i for i, f in enumerate(kept)}
    mat = _matrix(rows, vocab)
    w, b = _fit(mat, len(vocab))
    w = np.round(w, 4)
    b = round(b, 4)
    weights = {f: float(w[i]) for f, i in vocab.items() if w[i] != 0.0}
    benign_max = max(s for s, lab in zip(_margins(mat, w, b), mat.y, strict=True) if lab == 0)
    threshold = round(float(benign_max) + margin, 4)
    family_of = _family_of(rows, fam_rows, weights)
    return Model(weights, float(b), threshold, family_of, FAMILIES, {"benign_max": round(float(benign_max), 4), "margin": MARGIN})


def _family_of(rows: list[tuple[set[str], int]], fam_rows: list[str], weights: dict[str, float]) -> dict[str, int]:
    """feature -> the family it is most frequent in (document frequency relative to the family's size)."""
    size = {f: 0 for f in FAMILIES}
    counts: dict[str, list[int]] = {}
    for (feats, lab), fam in zip(rows, fam_rows, strict=True):
        if lab != 1 or not fam:
            continue
        k = FAMILIES.index(fam)
        size[fam] += 1
        for f in feats:
            if weights.get(f, 0.0) > 0:
                counts.setdefault(f, [0] * len(FAMILIES))[k] += 1
    out: dict[str, int] = {}
    for f, c in counts.items():
        rel = [c[k] / max(1, size[fam]) for k, fam in enumerate(FAMILIES)]
        out[f] = rel.index(max(rel))
    return out


def write_model(model: Model, path: Path) -> None:
    """Write ``model`` as gzip'd JSON, byte-identical for the same model (sorted, integer weights, no mtime)."""
    feats = sorted(model.weights)
    top = max((abs(v) for v in model.weights.values()), default=1.0)
    scale = top / 32767
    data = {
        "about": "Learned layer of the memory threat scan (docs/security.md §1); written by bench/train_scan_classifier.py.",
        "families": list(model.families),
        "bias": model.bias,
        "threshold": model.threshold,
        "scale": scale,
        "features": feats,
        "weights": [round(model.weights[f] / scale) for f in feats],
        "family_of": [model.family_of.get(f, -1) for f in feats],
        "meta": model.meta,
    }
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")
    path.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))


def _rates(model: Model, attacks: list[str], benign: list[str]) -> dict:
    def learned(t: str) -> bool:
        return score(for_matching(t[:65_536]).lower(), model) > model.threshold

    la = [learned(t) for t in attacks]
    lb = [learned(t) for t in benign]
    ra = [bool(find_threats(t, first_only=True)) for t in attacks]
    rb = [bool(find_threats(t, first_only=True)) for t in benign]
    out = {
        "learned_blocked": f"{sum(la)}/{len(la)}",
        "learned_refused": f"{sum(lb)}/{len(lb)}",
        "scan_blocked": f"{sum(a or b for a, b in zip(la, ra, strict=True))}/{len(la)}",
        "scan_refused": f"{sum(a or b for a, b in zip(lb, rb, strict=True))}/{len(lb)}",
    }
    out["learned_refused_notes"] = [t[:100] for t, x in zip(benign, lb, strict=True) if x][:8]
    return out


def cross_validate(groups: tuple[str, ...] = ("original", "dev", "heldout", "heldout2"), families: bool = True) -> dict:
    """Leave-one-corpus-out (``groups``) and leave-one-family-out (``families``) figures (JSON-ready)."""
    docs = load_docs()
    val = validation_notes()
    out: dict = {"leave_one_corpus_out": {}, "leave_one_family_out": {}}
    for group in groups:
        model = train([d for d in docs if d.group != group])
        test = [d for d in docs if d.group == group]
        fig = _rates(model, [d.text for d in test if d.label], [d.text for d in test if not d.label])
        fig["locomo_3_4_learned_refused"] = _rates(model, [], val)["learned_refused"]
        out["leave_one_corpus_out"][group] = fig
        print(group, json.dumps(fig, ensure_ascii=False), file=sys.stderr, flush=True)
    # The family folds keep every benign text, so they keep the full model's threshold (its
    # out-of-fold benign quantile is computed on the same notes): one fit per fold instead of five.
    threshold = load_model().threshold if families else 0.0
    out["threshold_of_the_family_folds"] = threshold
    for fam in FAMILIES if families else ():
        fit = _train_fixed([d for d in docs if not (d.label and d.family == fam)], 0.0)
        model = Model(fit.weights, fit.bias, threshold, fit.family_of, fit.families, fit.meta)
        test = [d.text for d in docs if d.label and d.family == fam and d.group != "augment"]
        fig = _rates(model, test, [])
        out["leave_one_family_out"][fam] = {k: v for k, v in fig.items() if "blocked" in k}
        print(fam, json.dumps(out["leave_one_family_out"][fam]), file=sys.stderr, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=MODEL_PATH, help="where to write the model (default: the shipped package data)")
    ap.add_argument("--cv", action="store_true", help="print grouped cross-validation figures instead of writing the model")
    ap.add_argument("--cv-only", choices=["corpora", "families"], help="with --cv: only the corpus folds or only the family folds")
    args = ap.parse_args()
    if args.cv:
        groups = () if args.cv_only == "families" else ("original", "dev", "heldout", "heldout2")
        print(json.dumps(cross_validate(groups, args.cv_only != "corpora"), ensure_ascii=False, indent=1))
        return
    model = train(load_docs())
    write_model(model, args.out)
    print(json.dumps({"out": str(args.out), "features": len(model.weights), "bytes": args.out.stat().st_size,
                      "bias": model.bias, "threshold": model.threshold, **model.meta}))


if __name__ == "__main__":
    main()
