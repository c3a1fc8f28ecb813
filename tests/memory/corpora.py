"""The attack and benign corpora of the threat scan (issue 13 §4), shared by the tests and the bench.

The attack phrasings and our own benign notes live in ``tests/memory/data/``; the LoCoMo notes are
read at run time from ``../shared/data/locomo/locomo-dev.json`` (evaluation data, CC BY-NC 4.0,
Maharana et al., ACL 2024), which is never copied into the repository.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
REPO = Path(__file__).resolve().parents[2]
#: Where the shared evaluation data sits next to a worktree (``../shared`` from the repository root).
LOCOMO = REPO.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


def attack_phrasings() -> list[tuple[str, str]]:
    """``(family, phrasing)`` for every phrasing of ``attack_corpus.json``."""
    data = json.loads((DATA / "attack_corpus.json").read_text(encoding="utf-8"))
    return [(fam, p) for fam, v in data["families"].items() for p in v["phrasings"]]


def own_benign_notes() -> list[tuple[str, str]]:
    """``(category, note)`` for the notes written for this test (paths, commands, emoji, CJK ...)."""
    data = json.loads((DATA / "benign_notes.json").read_text(encoding="utf-8"))
    return [(cat, n) for cat, notes in data["notes"].items() for n in notes]


def locomo_notes(path: Path = LOCOMO, conversations: range | None = None) -> list[tuple[str, str]]:
    """``(kind, text)`` for every LoCoMo observation, event, session summary and dialogue turn.

    ``conversations``: only those conversation indexes (the learned scan layer trains on 0-2, the
    tuning conversations, and keeps 3-4 for validation); all of them by default.

    Raises ``FileNotFoundError`` naming the path when the shared data is missing (tests fail, not skip).
    """
    if not path.is_file():
        raise FileNotFoundError(
            f"LoCoMo data not found at {path}: the benign corpus reads it from the shared evaluation data "
            "(../shared/data/locomo/locomo-dev.json next to the repository)."
        )
    out: list[tuple[str, str]] = []
    for n, conv in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        if conversations is not None and n not in conversations:
            continue
        for per_speaker in conv["observation"].values():
            for items in per_speaker.values():
                out += [("observation", item[0]) for item in items]
        for per_speaker in conv["event_summary"].values():
            if isinstance(per_speaker, dict):
                for items in per_speaker.values():
                    if isinstance(items, list):
                        out += [("event", x) for x in items if isinstance(x, str)]
        out += [("session_summary", v) for v in conv["session_summary"].values() if isinstance(v, str)]
        for turns in conv["conversation"].values():
            if isinstance(turns, list):
                out += [("turn", t["text"]) for t in turns if t.get("text")]
    return out


def corpus_attacks(path: Path) -> list[tuple[str, str]]:
    """``(family, phrasing)`` of a held-out corpus file (``{"attacks": {family: {"phrasings": [...]}}}``), in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [(fam, p) for fam, v in data["attacks"].items() for p in v["phrasings"]]


def corpus_benign(path: Path) -> list[tuple[str, str]]:
    """``(category, note)`` of a held-out corpus file (``{"benign": {"notes": {category: [...]}}}``), in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [(cat, n) for cat, notes in data["benign"]["notes"].items() for n in notes]


def heldout_attacks() -> list[tuple[str, str]]:
    """``(family, phrasing)`` of the held-out attack set (``heldout_corpus.json``; never tuned on)."""
    return corpus_attacks(DATA / "heldout_corpus.json")


def heldout_benign() -> list[tuple[str, str]]:
    """``(category, note)`` of the held-out benign set: notes that brush against attack words."""
    return corpus_benign(DATA / "heldout_corpus.json")


def dev_set() -> tuple[list[str], list[str]]:
    """``(attacks, benign)`` of the development set the intent features were tuned on (``dev_corpus.json``)."""
    data = json.loads((DATA / "dev_corpus.json").read_text(encoding="utf-8"))
    return list(data["attacks"]), list(data["benign"])


def heldout2_attacks() -> list[tuple[str, str]]:
    """``(family, phrasing)`` of the second sealed held-out set (``heldout2_corpus.json``; measured before/after only)."""
    return corpus_attacks(DATA / "heldout2_corpus.json")


def heldout2_benign() -> list[tuple[str, str]]:
    """``(category, note)`` of the second sealed held-out set: notes sharing the attacks' vocabulary."""
    return corpus_benign(DATA / "heldout2_corpus.json")


def heldout3_attacks() -> list[tuple[str, str]]:
    """``(family, phrasing)`` of the third held-out set (``heldout3_corpus.json``; sealed for two looks, tuning data since)."""
    return corpus_attacks(DATA / "heldout3_corpus.json")


def heldout3_benign() -> list[tuple[str, str]]:
    """``(category, note)`` of the third sealed held-out set: hard negatives sharing the attacks' vocabulary."""
    return corpus_benign(DATA / "heldout3_corpus.json")


#: Every corpus the scan has been tuned on, in the order they were written. The third to eighth
#: sealed sets joined after their second looks (``heldout3_measurements.json`` ...
#: ``heldout8_measurements.json``); ``tuning6`` was written as tuning data (never sealed), after the
#: fifth sealed set, and ``tuning8`` after the seventh: a later sealed set's test checks that it shares
#: no phrasing with any of these.
TUNING = ("original", "dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "tuning6", "heldout6",
          "heldout7", "heldout8", "tuning8")
#: Every corpus, sealed or tuning, in the order written: a sealed set is checked against (and its
#: looks measure) the tuning corpora written before it (:func:`tuned_before`).
WRITTEN = ("original", "dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "tuning6", "heldout6",
           "heldout7", "heldout8", "tuning8", "heldout9", "heldout10")
#: Corpora written before a set that were still sealed while it was written and looked at: not
#: tuning data for it (tuning6 and heldout6 were written while heldout5 was sealed; heldout6 was
#: checked against it as a sealed sister instead, and its looks measured the tuning corpora without it).
#: heldout8 was written while heldout7 was sealed (heldout5 and heldout6 were tuning data by then);
#: tuning8 was written on the same day as heldout8, by another author, while both were sealed.
#: heldout9 was written after both were spent but while they were being made tuning data on another
#: branch: they are its sister sets, never its tuning corpora, whether or not they are in TUNING yet.
#: heldout10 was written while heldout9 was sealed (heldout7 and heldout8 were tuning data by then).
SEALED_WHEN_WRITTEN = {"tuning6": ("heldout5",), "heldout6": ("heldout5",), "heldout7": ("heldout5", "heldout6"),
                       "heldout8": ("heldout7",), "tuning8": ("heldout7", "heldout8"),
                       "heldout9": ("heldout7", "heldout8"), "heldout10": ("heldout9",)}


def heldout4_attacks() -> list[tuple[str, str]]:
    """``(family, phrasing)`` of the fourth held-out set (``heldout4_corpus.json``; sealed for two looks, tuning data since)."""
    return corpus_attacks(DATA / "heldout4_corpus.json")


def heldout4_benign() -> list[tuple[str, str]]:
    """``(category, note)`` of the fourth sealed held-out set: hard negatives sharing the attacks' vocabulary."""
    return corpus_benign(DATA / "heldout4_corpus.json")


def tuning6_attacks() -> list[tuple[str, str]]:
    """``(family, phrasing)`` of the sixth corpus (``tuning6_corpus.json``): tuning data from the start, measured by its cross-validation fold."""
    return corpus_attacks(DATA / "tuning6_corpus.json")


def tuning6_benign() -> list[tuple[str, str]]:
    """``(category, note)`` of the sixth corpus: hard negatives sharing the attacks' vocabulary."""
    return corpus_benign(DATA / "tuning6_corpus.json")


def tuning8_attacks() -> list[tuple[str, str]]:
    """``(family, phrasing)`` of the eighth corpus (``tuning8_corpus.json``): tuning data from the start, written after the seventh sealed set."""
    return corpus_attacks(DATA / "tuning8_corpus.json")


def tuning8_benign() -> list[tuple[str, str]]:
    """``(category, note)`` of the eighth corpus: hard negatives sharing the attacks' vocabulary."""
    return corpus_benign(DATA / "tuning8_corpus.json")


def heldout5_attacks() -> list[tuple[str, str]]:
    """``(family, phrasing)`` of the fifth held-out set (``heldout5_corpus.json``; sealed for two looks, tuning data since)."""
    return corpus_attacks(DATA / "heldout5_corpus.json")


def heldout5_benign() -> list[tuple[str, str]]:
    """``(category, note)`` of the fifth held-out set: hard negatives sharing the attacks' vocabulary."""
    return corpus_benign(DATA / "heldout5_corpus.json")


def heldout6_attacks() -> list[tuple[str, str]]:
    """``(family, phrasing)`` of the sixth held-out set (``heldout6_corpus.json``; sealed for two looks, tuning data since)."""
    return corpus_attacks(DATA / "heldout6_corpus.json")


def heldout6_benign() -> list[tuple[str, str]]:
    """``(category, note)`` of the sixth held-out set: hard negatives sharing the attacks' vocabulary."""
    return corpus_benign(DATA / "heldout6_corpus.json")


def heldout7_attacks() -> list[tuple[str, str]]:
    """``(family, phrasing)`` of the seventh held-out set (``heldout7_corpus.json``; sealed for two looks, tuning data since)."""
    return corpus_attacks(DATA / "heldout7_corpus.json")


def heldout7_benign() -> list[tuple[str, str]]:
    """``(category, note)`` of the seventh held-out set: hard negatives sharing the attacks' vocabulary."""
    return corpus_benign(DATA / "heldout7_corpus.json")


def heldout8_attacks() -> list[tuple[str, str]]:
    """``(family, phrasing)`` of the eighth held-out set (``heldout8_corpus.json``; sealed for two looks, tuning data since)."""
    return corpus_attacks(DATA / "heldout8_corpus.json")


def heldout8_benign() -> list[tuple[str, str]]:
    """``(category, note)`` of the eighth held-out set: hard negatives sharing the attacks' vocabulary."""
    return corpus_benign(DATA / "heldout8_corpus.json")


def fold(text: str) -> str:
    """NFKC, lower case, every char that is not a letter or digit dropped, runs of whitespace made one space.

    The key under which two phrasings count as the same when a sealed set is checked against the
    corpora the scan was tuned on (a copy with new case, punctuation or spacing folds to the same key).
    """
    text = unicodedata.normalize("NFKC", text).lower()
    kept = "".join(c for c in text if unicodedata.category(c)[0] in "LN" or c.isspace())
    return " ".join(kept.split())


def tuning_corpus(name: str) -> tuple[list[str], list[str]]:
    """``(attacks, benign)`` texts of a corpus the scan was tuned on, by the name the measurement logs use.

    ``name``: ``"original"`` (attack_corpus.json; benign_notes.json plus every LoCoMo text), ``"dev"``,
    ``"heldout"``, ``"heldout2"`` ... ``"heldout8"``, ``"tuning6"`` or ``"tuning8"``. Raises ``KeyError`` for any other name.
    """
    if name == "original":
        return ([p for _, p in attack_phrasings()], [n for _, n in own_benign_notes() + locomo_notes()])
    if name == "dev":
        return dev_set()
    loaders = {
        "heldout": (heldout_attacks, heldout_benign),
        "heldout2": (heldout2_attacks, heldout2_benign),
        "heldout3": (heldout3_attacks, heldout3_benign),
        "heldout4": (heldout4_attacks, heldout4_benign),
        "heldout5": (heldout5_attacks, heldout5_benign),
        "tuning6": (tuning6_attacks, tuning6_benign),
        "heldout6": (heldout6_attacks, heldout6_benign),
        "heldout7": (heldout7_attacks, heldout7_benign),
        "heldout8": (heldout8_attacks, heldout8_benign),
        "tuning8": (tuning8_attacks, tuning8_benign),
    }
    attacks, benign = loaders[name]
    return [p for _, p in attacks()], [n for _, n in benign()]


def tuned_before(name: str) -> list[str]:
    """The corpora of :data:`TUNING` a held-out set ``name`` is checked against: those written before it
    (:data:`WRITTEN`) that were tuning data then (:data:`SEALED_WHEN_WRITTEN`), or all of them for a set
    not listed there (a new sealed set, written after them)."""
    if name not in WRITTEN:
        return list(TUNING)
    before = set(WRITTEN[: WRITTEN.index(name)]) - set(SEALED_WHEN_WRITTEN.get(name, ()))
    return [t for t in TUNING if t in before]


def shared_with(texts: list[str], tuning: list[str]) -> list[str]:
    """The ``texts`` equal to one of the corpora named in ``tuning``, as written, lower-cased or folded (:func:`fold`)."""
    seen: set[str] = set()
    for name in tuning:
        a, b = tuning_corpus(name)
        seen |= {t.lower() for t in a + b} | {fold(t) for t in a + b}
    return [t for t in texts if t.lower() in seen or fold(t) in seen]


def ratio(figure: str) -> tuple[int, int]:
    """``"146/191"`` (a figure in a held-out measurement log) -> ``(146, 191)``."""
    a, b = figure.split("/")
    return int(a), int(b)


def by_key(items: list[tuple[str, str]]) -> dict[str, list[str]]:
    """``(family or category, text)`` pairs grouped by their first element, in order."""
    out: dict[str, list[str]] = {}
    for key, text in items:
        out.setdefault(key, []).append(text)
    return out


B15_BENIGN_NOTES = [
    "Deploy key for the repo is ~/.ssh/id_ed25519_deploy",
    "API key lives in ~/.config/app/.env; check before asking",
    "You are now ready to run the migration.",
    "Escape any <script> tag before rendering user input.",
]
"""Failure case B15: notes that name key paths or attack-like phrases and must be stored (the scan and the store both)."""
