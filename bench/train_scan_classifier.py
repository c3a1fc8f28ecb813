"""Train the learned layer of the memory threat scan (issue 13 §4; docs/security.md §1, "The learned layer").

Reads every tuning corpus of the scan (``tests/memory/data``: attack_corpus, benign_notes, dev,
heldout, heldout2 ... heldout8, tuning6 and tuning8; ``--exclude`` leaves some out, :data:`TRAIN_EXCLUDED`),
LoCoMo conversations 0-2 (``../shared/data/locomo``; 3-4 are validation and never trained on), the
augmentation of ``bench/scan_augment.py`` and the hard negatives of ``bench/scan_augment_talk.py``; trains an L2-regularised,
class-balanced logistic regression (full-batch Adam, fixed iteration count, no randomness
outside the seeded augmentation) over :func:`hermes_memory.memory.scan_learned.features`; keeps
the :data:`KEEP` heaviest features and trains again on them alone (the shipped model is exactly
that second fit); sets the threshold :data:`MARGIN` logits above the :data:`OOF_QUANTILE` quantile of the
out-of-fold benign scores (and above every benign training score), and writes ``src/hermes_memory/memory/scan_model.json.gz`` (byte-identical on every
run: sorted features, integer weights, gzip without a timestamp).

``--cv`` prints, as JSON, grouped cross-validation instead: leave-one-corpus-out (train without a
corpus, both its attacks and its notes, and test on it) and leave-one-family-out (train without
every attack of one family, test on that family's real attacks), each for the learned layer alone
and for the whole scan (regexes OR learned), plus the LoCoMo 3-4 refusals of every fold. The family
folds keep every note, so they keep the shipped model's threshold (one fit per fold).

``--cv --cv-groups heldout8,heldout7 --dump DIR`` runs only those corpus folds and writes each fold's
scores (to try another threshold rule on the same folds); ``--measure PATH`` prints a model file's
figures on every corpus.

Usage: ``python bench/train_scan_classifier.py [--out PATH] [--cv [--cv-only corpora|families] [--cv-groups A,B] [--dump DIR]]
[--measure PATH] [--exclude A,B|none] [--talk] [--corpus-weight W]``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
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
import scan_augment_talk  # noqa: E402

from hermes_memory.memory.scan import _scan_views  # noqa: E402
from hermes_memory.memory.scan_learned import MODEL_PATH, Model, features, load_model, norm, score, windows  # noqa: E402
from hermes_memory.memory.scan_text import find_invisible, for_matching  # noqa: E402

SEED = 13
#: Train on the hard negatives of ``bench/scan_augment_talk.py`` too (``--talk``).
TALK = True
#: Train on the standing tool-use rules of ``bench/scan_augment_talk.py`` too (hard negatives; ``--tool-rules``).
TOOL_RULES = False
#: Features kept after the first fit (by absolute weight).
KEEP = 24_000
#: L2 penalty per unit of (class-balanced) sample weight; Adam step and iterations.
L2 = 1e-6
LR = 0.2
ITERS = 600
#: Sample weight of a text of a written corpus (attack or note) against 1 for a templated augmentation
#: text: the corpora are the phrasings people and attackers really write, the templates repeat
#: their parts hundreds of times.
CORPUS_WEIGHT = 2.0
#: Threshold = max(highest benign training score, OOF_QUANTILE of the out-of-fold benign scores) + MARGIN (logits), over INNER_FOLDS folds of the training texts.
MARGIN = 0.25
INNER_FOLDS = 4
#: The out-of-fold benign quantile the threshold sits above (the highest 0.2 % are outliers the
#: regex layer's cues are for: quoted attacks, language glosses). 0.999 until the retrain on every
#: spent set; 0.998 was chosen on the heldout7 and heldout8 folds' scores (``--dump``: the lowest of 0.995,
#: 0.997, 0.998 and 0.999 at which neither fold refuses more notes than the model shipped before; docs/security.md §1).
OOF_QUANTILE = 0.998
#: The learned families a refusal names, and the corpus families each stands for.
FAMILY_MAP = {
    "ignore_override": ["ignore_previous", "ignore_paraphrase", "ignore_override", "instruction_override"],
    "multilingual": ["ignore_previous_french", "ignore_previous_spanish", "ignore_previous_german", "ignore_previous_chinese",
                     "other_languages", "multilingual"],
    "role_persona": ["role_reassignment", "role_persona"],
    "remove_filters": ["remove_filters"],
    "fake_markers": ["fake_system_markers", "fake_update", "fake_markers", "fake_markers_delimiters", "hidden_markup_and_config",
                     "hidden_markup", "fake_tool_results"],
    "prompt_leak": ["prompt_leak"],
    "encoded": ["encoded_payloads", "leetspeak", "encoded_obfuscated", "unicode_tricks"],
    "exfiltration": ["exfiltration", "exfiltration_indirect", "hardcoded_secret", "credential_planting", "context_exfil",
                     "markdown_links", "lookalike_domains", "export_payloads"],
    "agent_hijack": ["destructive_as_instruction", "c2_payload_user_md", "deception_and_hiding", "agent_tool_hijack", "tool_permission_hijack",
                     "agent_config_mod", "destructive_commands", "c2_node_payloads", "translate_execute",
                     "c2_botnet", "persistence_propagation", "social_engineering", "social_engineering_urgency",
                     "deferred_trigger", "config_persistence", "indirect_document_injection", "conditional_trigger",
                     "delayed_setup", "repo_agent_files"],
}
FAMILIES = tuple(FAMILY_MAP)
_FAMILY_OF = {src: fam for fam, srcs in FAMILY_MAP.items() for src in srcs}
#: Kinds of attack (the corpus families, one name per kind across corpora) for leave-one-kind-out.
KIND_OF = {
    "ignore_previous": "ignore_override", "ignore_paraphrase": "ignore_override", "role_reassignment": "role_persona",
    "fake_system_markers": "fake_markers", "fake_markers_delimiters": "fake_markers", "hidden_markup_and_config": "hidden_markup",
    "encoded_payloads": "encoded", "leetspeak": "encoded", "encoded_obfuscated": "encoded",
    "ignore_previous_french": "multilingual", "ignore_previous_spanish": "multilingual", "ignore_previous_german": "multilingual",
    "ignore_previous_chinese": "multilingual", "other_languages": "multilingual", "exfiltration_indirect": "exfiltration",
    "tool_permission_hijack": "agent_tool_hijack", "deception_and_hiding": "agent_tool_hijack",
    "destructive_as_instruction": "destructive_commands", "c2_payload_user_md": "c2_node_payloads",
    "instruction_override": "ignore_override", "credential_planting": "hardcoded_secret", "c2_botnet": "c2_node_payloads",
    "persistence_propagation": "persistence", "social_engineering": "social_engineering",
    "social_engineering_urgency": "social_engineering", "deferred_trigger": "persistence", "config_persistence": "agent_config_mod",
    "indirect_document_injection": "agent_tool_hijack", "context_exfil": "exfiltration", "conditional_trigger": "persistence",
}
#: The kinds held out one at a time by ``--cv`` (every kind with real attacks in a corpus).
KINDS = ("ignore_override", "role_persona", "fake_markers", "hidden_markup", "fake_update", "remove_filters", "prompt_leak",
         "encoded", "multilingual", "exfiltration", "agent_tool_hijack", "destructive_commands", "c2_node_payloads",
         "agent_config_mod", "hardcoded_secret", "translate_execute", "persistence", "social_engineering")


@dataclass(frozen=True)
class Doc:
    """One training text: ``label`` 1 attack / 0 benign, ``family`` (learned family or ``""``), ``group`` (its corpus),
    ``kind`` (the attack's kind, :data:`KIND_OF`; ``""`` for a note or an unlabelled attack), ``lang`` (ISO 639-1, :func:`lang_of`)."""

    text: str
    label: int
    family: str
    group: str
    kind: str = ""
    lang: str = "en"


def _attack(family: str, text: str, group: str) -> Doc:
    kind = KIND_OF.get(family, family)
    return Doc(text, 1, _FAMILY_OF.get(family, ""), group, kind, lang_of(text, foreign=kind == "multilingual"))


def _note(text: str, group: str) -> Doc:
    return Doc(text, 0, "", group, "", lang_of(text))


def load_docs() -> list[Doc]:
    """Every tuning text, tagged with its corpus group (augmentation is the group ``augment``), kind and language."""
    docs: list[Doc] = []
    docs += [_attack(f, p, "original") for f, p in corpora.attack_phrasings()]
    docs += [_note(n, "original") for _, n in corpora.own_benign_notes()]
    docs += [_note(n, "locomo") for _, n in corpora.locomo_notes(conversations=range(3))]
    dev_a, dev_b = corpora.dev_set()
    docs += [_attack("", p, "dev") for p in dev_a] + [_note(n, "dev") for n in dev_b]
    for group, attacks, benign in (("heldout", corpora.heldout_attacks, corpora.heldout_benign),
                                   ("heldout2", corpora.heldout2_attacks, corpora.heldout2_benign),
                                   ("heldout3", corpora.heldout3_attacks, corpora.heldout3_benign),
                                   ("heldout4", corpora.heldout4_attacks, corpora.heldout4_benign),
                                   ("heldout5", corpora.heldout5_attacks, corpora.heldout5_benign),
                                   ("tuning6", corpora.tuning6_attacks, corpora.tuning6_benign),
                                   ("heldout6", corpora.heldout6_attacks, corpora.heldout6_benign),
                                   ("heldout7", corpora.heldout7_attacks, corpora.heldout7_benign),
                                   ("heldout8", corpora.heldout8_attacks, corpora.heldout8_benign),
                                   ("tuning8", corpora.tuning8_attacks, corpora.tuning8_benign)):
        docs += [_attack(f, p, group) for f, p in attacks()] + [_note(n, group) for _, n in benign()]
    docs += [Doc(t, 1, _FAMILY_OF.get(k, k), "augment", k, lang) for k, lang, t in scan_augment.tagged_attacks(SEED)]
    docs += [Doc(t, 0, "", "augment", "", lang if lang != "xx" else lang_of(t)) for _, lang, t in scan_augment.tagged_benign(SEED)]
    if TALK:
        docs += [Doc(t, 0, "", "augment", "", "en") for _, t in scan_augment_talk.benign(SEED) + scan_augment_talk.fiction_benign(SEED)]
        if TOOL_RULES:
            docs += [Doc(t, 0, "", "augment", "", "en") for _, t in scan_augment_talk.tool_rules(SEED)]
        docs += [Doc(t, 1, _FAMILY_OF[k], "augment", k, "en") for k, t in scan_augment_talk.attacks(SEED)]
    return docs


#: Script ranges that name a language outright, tried in order (Arabic script: Persian when it has a Persian letter).
_SCRIPTS = [("ja", "\u3040-\u30ff"), ("ko", "\uac00-\ud7af"), ("zh", "\u4e00-\u9fff"), ("he", "\u0590-\u05ff"),
            ("fa", "\u067e\u0686\u0698\u06af\u06cc\u06a9"), ("ar", "\u0600-\u06ff"), ("hi", "\u0900-\u097f"),
            ("bn", "\u0980-\u09ff"), ("th", "\u0e00-\u0e7f"), ("el", "\u0370-\u03ff"), ("uk", "\u0456\u0457\u0454\u0491"),
            ("ru", "\u0400-\u04ff")]
_SCRIPT_RX = [(lang, re.compile(f"[{chars}]")) for lang, chars in _SCRIPTS]
#: Function words that mark a Latin-script language (two or more, and more than English's, decide).
_WORDS = {
    "en": "the and you your all to of is are with from now this",
    "fr": "les des tes ton et à toutes tu est pas une dans pour ne plus oublie oubliez règles consignes réponds révèle envoie affiche désormais tout ce vos",
    "es": "las los tus y todas eres sin para una del ahora dime el ignora olvida reglas instrucciones responde revela muestra envía sigas digas nada",
    "de": "die der und alle du deine ist nicht mit ohne ein eine ab vergiss vergessen ignoriere anweisungen regeln antworte zeige zeig sende sag alles mir den",
    "it": "le tutte tue sei il di e per senza una della non dimentica regole istruzioni rispondi mostra tutto quello che",
    "pt": "as todas suas você sem para uma não de agora e o esqueça regras instruções responda mostre",
    "nl": "de alle je het en een van zonder naar vanaf nu niet",
    "sv": "alla och du din att inte utan från nu med det",
    "da": "alle og du dine at ikke uden fra nu med det",
    "no": "alle og du dine å ikke uten fra nå med det",
    "pl": "wszystkie się nie swoje teraz jest wcześniejsze zasady",
    "cs": "všechny svá teď pravidla pokyny už",
    "tr": "tüm ve bir bana bu için olmadan önceki",
    "vi": "tất cả các và của bạn không hãy trước",
    "id": "semua dan yang tidak ke sekarang tanpa",
    "ms": "semua dan yang tidak ke sekarang tanpa ini",
    "ro": "toate și acum fără",
    "hu": "összes és nem most nélkül",
    "fi": "kaikki ja ei nyt ilman",
    "sw": "yote kwa sasa bila",
    "tl": "ang lahat ng mga",
}
_WORD_SETS = {lang: set(words.split()) for lang, words in _WORDS.items()}


def lang_of(text: str, foreign: bool = False) -> str:
    """The language of ``text`` (ISO 639-1), by script, else by function words; ``"en"`` when unsure
    (``foreign``: the text is known not to be English, one word decides). A heuristic for grouping
    the cross-validation folds only."""
    for lang, rx in _SCRIPT_RX:
        if rx.search(text):
            return lang
    toks = re.findall(r"[^\W\d_]+", text.lower())
    votes = {lang: sum(t in ws for t in toks) for lang, ws in _WORD_SETS.items()}
    best = max(votes, key=lambda k: (votes[k], k == "en"))
    if foreign:
        best = max((k for k in votes if k != "en"), key=lambda k: votes[k])
        return best if votes[best] >= 1 else "en"
    return best if best != "en" and votes[best] >= 2 and votes[best] > votes["en"] else "en"


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


def _matrix(rows: list[tuple[set[str], int]], vocab: dict[str, int], weights: list[float] | None = None) -> _Matrix:
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
    if weights is not None:
        sw = sw * np.array(weights)
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
    """The model trained on ``docs``, its threshold above the out-of-fold benign scores (:func:`_oof_benign_scores`)."""
    model = _train_fixed(docs, 0.0)
    oof_scores = _oof_benign_scores(docs)
    _LAST_OOF[:] = oof_scores
    oof = float(np.quantile(np.array(oof_scores), OOF_QUANTILE))
    threshold = round(max(oof, model.meta["benign_max"]) + MARGIN, 4)
    return Model(model.weights, model.bias, threshold, model.family_of, model.families,
                 {**model.meta, "oof_benign_max": round(oof, 4)})


#: The out-of-fold benign scores of the last :func:`train` (for ``--cv --dump``).
_LAST_OOF: list[float] = []


def _oof_benign_scores(docs: list[Doc]) -> list[float]:
    """The scores of the benign texts of ``docs`` by models that did not see them (:data:`INNER_FOLDS`
    folds, seeded split): what a note nobody trained on may score; :func:`train`'s threshold sits above
    their :data:`OOF_QUANTILE` quantile."""
    order = list(range(len(docs)))
    random.Random(SEED).shuffle(order)
    fold = {i: k % INNER_FOLDS for k, i in enumerate(order)}
    scores: list[float] = []
    for k in range(INNER_FOLDS):
        model = _train_fixed([d for i, d in enumerate(docs) if fold[i] != k], 0.0)
        scores += [score(for_matching(d.text).lower(), model) for i, d in enumerate(docs) if fold[i] == k and d.label == 0]
    return scores


def _train_fixed(docs: list[Doc], margin: float) -> Model:
    """Two fits (all features seen twice or more, then the :data:`KEEP` heaviest); threshold = benign max + ``margin``."""
    docs = _with_noise(docs)
    rows: list[tuple[set[str], int]] = []
    fam_rows: list[str] = []
    row_w: list[float] = []
    for d in docs:
        # An attack's rows are its windows as a whole; a note's rows are every window scored at
        # inference (its lines too), so no line of a note is left to score high.
        for v in _views(d.text) if d.label == 0 else _whole_views(d.text):
            rows.append((features(v), d.label))
            fam_rows.append(d.family)
            row_w.append(1.0 if d.group == "augment" else CORPUS_WEIGHT)
    df: dict[str, int] = {}
    for feats, _ in rows:
        for f in feats:
            df[f] = df.get(f, 0) + 1
    vocab = {f: i for i, f in enumerate(sorted(f for f, c in df.items() if c >= 2))}
    w, b = _fit(_matrix(rows, vocab, row_w), len(vocab))
    names = sorted(vocab)
    order = np.argsort(-np.abs(w), kind="stable")[:KEEP]
    kept = sorted(names[i] for i in order if w[i] != 0.0)
    vocab = {f: i for i, f in enumerate(kept)}
    mat = _matrix(rows, vocab, row_w)
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


def _regex_hit(text: str) -> bool:
    """The regex layer alone (invisible characters, families, leetspeak and decoded views), without the
    shipped learned layer: a fold's "whole scan" is the regexes OR the fold's own model, never the
    shipped model, which has seen the held-out texts."""
    text = text[:65_536]
    return bool(find_invisible(text)) or bool(_scan_views(for_matching(text), True)[0])


def _rates(model: Model, attacks: list[str], benign: list[str]) -> dict:
    def learned(t: str) -> bool:
        return score(for_matching(t[:65_536]).lower(), model) > model.threshold

    la = [learned(t) for t in attacks]
    lb = [learned(t) for t in benign]
    ra = [_regex_hit(t) for t in attacks]
    rb = [_regex_hit(t) for t in benign]
    out: dict = {
        "learned_blocked": f"{sum(la)}/{len(la)}",
        "learned_refused": f"{sum(lb)}/{len(lb)}",
        "scan_blocked": f"{sum(a or b for a, b in zip(la, ra, strict=True))}/{len(la)}",
        "scan_refused": f"{sum(a or b for a, b in zip(lb, rb, strict=True))}/{len(lb)}",
    }
    out["learned_only_refused"] = sum(a and not b for a, b in zip(lb, rb, strict=True))
    out["learned_refused_notes"] = [t[:100] for t, x in zip(benign, lb, strict=True) if x][:8]
    return out


CORPUS_GROUPS = ("original", "dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "tuning6", "heldout6",
                 "heldout7", "heldout8", "tuning8")
#: Corpora loaded (and measured by their ``--cv`` fold) but never trained on: none since the retrain on
#: every spent set (docs/security.md §1, "The learned layer trained on every spent set"). tuning6,
#: heldout5 and heldout6 were kept out before because every model trained with them refused one LoCoMo
#: validation text (a second-person encouragement); the hard negatives of ``bench/scan_augment_talk.py``
#: (talk of that kind, written from general knowledge, never from conversations 3-4) removed it.
#: ``--exclude tuning6,heldout5,heldout6,heldout7,heldout8,tuning8 --corpus-weight 2`` without ``--talk``
#: (and :data:`OOF_QUANTILE` 0.999) is the configuration of the model shipped before.
TRAIN_EXCLUDED: tuple[str, ...] = ()


def training_docs(docs: list[Doc], excluded: tuple[str, ...] | None = None) -> list[Doc]:
    """``docs`` without the corpora of ``excluded`` (default :data:`TRAIN_EXCLUDED`)."""
    out = TRAIN_EXCLUDED if excluded is None else excluded
    return [d for d in docs if d.group not in out]


def _fixed_threshold_model(docs: list[Doc], threshold: float) -> Model:
    fit = _train_fixed(docs, 0.0)
    return Model(fit.weights, fit.bias, threshold, fit.family_of, fit.families, fit.meta)


def _dump(path: Path, model: Model, test: list[Doc], val: list[str]) -> None:
    """Write a fold's scores (``--dump``): the threshold rule's inputs and every test text's learned score and regex hit,
    so another threshold rule can be tried on the same fold without retraining."""
    def row(t: str) -> list:
        return [round(score(for_matching(t[:65_536]).lower(), model), 4), _regex_hit(t)]

    data = {"threshold": model.threshold, "meta": model.meta, "oof": sorted(round(x, 4) for x in _LAST_OOF),
            "attacks": [row(d.text) for d in test if d.label], "notes": [row(d.text) for d in test if not d.label],
            "locomo_3_4": sorted((round(score(for_matching(t).lower(), model), 4) for t in val), reverse=True)[:50]}
    path.write_text(json.dumps(data), encoding="utf-8")


def cross_validate(groups: tuple[str, ...] = CORPUS_GROUPS, families: bool = True, kinds: bool = True, langs: bool = True,
                   dump: Path | None = None) -> dict:
    """Grouped cross-validation figures (JSON-ready).

    * ``leave_one_corpus_out`` (``groups``): train without a corpus (its attacks and its notes), test on it;
    * ``leave_one_family_out`` (``families``): without every attack of one learned family, test on that
      family's corpus attacks;
    * ``leave_one_kind_out`` (``kinds``): without every attack of one kind (:data:`KINDS`, corpora and
      augmentation alike), test on that kind's corpus attacks;
    * ``leave_one_language_out`` (``langs``): without every text (attacks and notes) in one language,
      test on that language's corpus attacks, its augmentation attacks and its augmentation notes.

    The family, kind and language folds keep the shipped threshold (one fit per fold).
    """
    docs = load_docs()
    val = validation_notes()
    out: dict = {"leave_one_corpus_out": {}, "leave_one_family_out": {}, "leave_one_kind_out": {}, "leave_one_language_out": {}}
    for group in groups:
        model = train(training_docs([d for d in docs if d.group != group]))
        test = [d for d in docs if d.group == group]
        fig = _rates(model, [d.text for d in test if d.label], [d.text for d in test if not d.label])
        fig["locomo_3_4_learned_refused"] = _rates(model, [], val)["learned_refused"]
        out["leave_one_corpus_out"][group] = fig
        if dump is not None:
            _dump(dump / f"fold_{group}.json", model, test, val)
        print(group, json.dumps(fig, ensure_ascii=False), file=sys.stderr, flush=True)
    threshold = load_model().threshold
    out["threshold_of_the_family_kind_and_language_folds"] = threshold
    for fam in FAMILIES if families else ():
        model = _fixed_threshold_model(training_docs([d for d in docs if not (d.label and d.family == fam)]), threshold)
        texts = [d.text for d in docs if d.label and d.family == fam and d.group != "augment"]
        out["leave_one_family_out"][fam] = {k: v for k, v in _rates(model, texts, []).items() if "blocked" in k}
        print(fam, json.dumps(out["leave_one_family_out"][fam]), file=sys.stderr, flush=True)
    for kind in KINDS if kinds else ():
        model = _fixed_threshold_model(training_docs([d for d in docs if not (d.label and d.kind == kind)]), threshold)
        texts = [d.text for d in docs if d.label and d.kind == kind and d.group != "augment"]
        out["leave_one_kind_out"][kind] = {k: v for k, v in _rates(model, texts, []).items() if "blocked" in k}
        print(kind, json.dumps(out["leave_one_kind_out"][kind]), file=sys.stderr, flush=True)
    for lang in sorted({d.lang for d in docs} - {"en"}) if langs else ():
        model = _fixed_threshold_model(training_docs([d for d in docs if d.lang != lang]), threshold)
        real = [d.text for d in docs if d.label and d.lang == lang and d.group != "augment"]
        aug_a = [d.text for d in docs if d.label and d.lang == lang and d.group == "augment"]
        aug_b = [d.text for d in docs if not d.label and d.lang == lang]
        fig = {f"corpus_{k}": v for k, v in _rates(model, real, []).items() if "blocked" in k} if real else {}
        fig |= {f"augment_{k}": v for k, v in _rates(model, aug_a, aug_b).items() if k != "learned_refused_notes"}
        out["leave_one_language_out"][lang] = fig
        print(lang, json.dumps(fig), file=sys.stderr, flush=True)
    return out


def measure(model: Model, groups: tuple[str, ...] = CORPUS_GROUPS) -> dict:
    """The figures of ``model`` (learned alone, and regexes OR it) on every corpus group, and its LoCoMo refusals
    (conversations 0-2, trained on, and 3-4, never trained on)."""
    docs = load_docs()
    out: dict = {}
    for group in groups:
        test = [d for d in docs if d.group == group]
        out[group] = _rates(model, [d.text for d in test if d.label], [d.text for d in test if not d.label])
        print(group, json.dumps(out[group], ensure_ascii=False), file=sys.stderr, flush=True)
    out["locomo_0_2_learned_refused"] = _rates(model, [], [d.text for d in docs if d.group == "locomo"])["learned_refused"]
    out["locomo_3_4_learned_refused"] = _rates(model, [], validation_notes())["learned_refused"]
    return out


def main() -> None:
    global TRAIN_EXCLUDED, TALK, CORPUS_WEIGHT, TOOL_RULES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=MODEL_PATH, help="where to write the model (default: the shipped package data)")
    ap.add_argument("--cv", action="store_true", help="print grouped cross-validation figures instead of writing the model")
    ap.add_argument("--cv-only", choices=["corpora", "families", "kinds", "languages"], help="with --cv: only one kind of fold")
    ap.add_argument("--cv-groups", help="with --cv: the comma-separated corpora to leave out one at a time (default: all)")
    ap.add_argument("--exclude", help="comma-separated corpora never trained on (default: TRAIN_EXCLUDED; 'none': train on all)")
    ap.add_argument("--dump", type=Path, help="with --cv: write each corpus fold's scores to DIR/fold_<corpus>.json")
    ap.add_argument("--measure", type=Path, help="print the figures of the model file at PATH on every corpus instead")
    ap.add_argument("--talk", action="store_true", help="train on the hard negatives of bench/scan_augment_talk.py too")
    ap.add_argument("--corpus-weight", type=float, help=f"sample weight of a written-corpus text (default {CORPUS_WEIGHT})")
    ap.add_argument("--tool-rules", action="store_true", help="train on the standing tool-use rules of bench/scan_augment_talk.py too")
    args = ap.parse_args()
    TOOL_RULES = TOOL_RULES or args.tool_rules
    CORPUS_WEIGHT = args.corpus_weight or CORPUS_WEIGHT
    TALK = TALK or args.talk
    if args.exclude is not None:
        TRAIN_EXCLUDED = tuple(g for g in args.exclude.split(",") if g and g != "none")
    if args.measure:
        print(json.dumps(measure(load_model(args.measure)), ensure_ascii=False, indent=1))
        return
    if args.cv:
        only = args.cv_only
        groups = CORPUS_GROUPS if only in (None, "corpora") else ()
        if args.cv_groups:
            groups = tuple(args.cv_groups.split(","))
        print(json.dumps(cross_validate(groups, only in (None, "families"), only in (None, "kinds"), only in (None, "languages"), args.dump),
                         ensure_ascii=False, indent=1))
        return
    model = train(training_docs(load_docs()))
    write_model(model, args.out)
    print(json.dumps({"out": str(args.out), "features": len(model.weights), "bytes": args.out.stat().st_size,
                      "bias": model.bias, "threshold": model.threshold, **model.meta}))


if __name__ == "__main__":
    main()
