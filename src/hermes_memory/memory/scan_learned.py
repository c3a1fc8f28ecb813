"""The learned layer of the threat scan: a linear classifier over n-grams of the normalised text.

The regex families (:mod:`.scan`) are the explainable first layer; they generalise poorly to
phrasings nobody wrote a pattern for (issue 13 §4). This layer scores the same normalised text
(:func:`.scan_text.for_matching`, lower-cased) with a logistic-regression model trained offline by
``bench/train_scan_classifier.py`` (docs/security.md §1, "The learned layer"):

* features (:func:`features`): the *set* of word unigrams, word bigrams, 5-character word stems
  (``instr*``), CJK characters as words (so their bigrams are character bigrams) and runs of two or
  more symbols (``<|``, ``###``, ``-->``), and the concepts a cross-lingual cue lexicon finds
  (:func:`concepts`: ``"oublie"``, ``"vergiss"``, ``"忽 略"`` and ``"forget"`` all give ``§override``)
  with their pairs; binary, the score divided by the square root of their
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
from itertools import chain, repeat
from pathlib import Path

from hermes_memory.memory.scan_text import for_matching

__all__ = [
    "MODEL_PATH", "STRIDE", "WINDOW", "LearnedHit", "Model", "concepts", "features", "features_of", "iter_window_features", "learned_hit",
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


#: Cross-lingual cue lexicon of the learned layer: a token, a CJK/Hangul character bigram (``"忽 略"``) or a
#: 5-character stem (``"ignor*"``) -> the concept it names. Written from general knowledge of the
#: languages (not from any corpus): the English words train a concept's weight, and the same concept in
#: another language then scores without that language's own n-grams (docs/security.md §1).
_LEXICON_SRC: dict[str, str] = {
    "override": "ignore ignoring disregard forget discard scrap overrule override overrides supersede supersedes cancel cancelled "
                "ignor* disre* overr* super* forge* oublie oubliez oublier oublies ignorez olvida olvide olvidar olvides ignora ignorar "
                "ignoren ignores vergiss vergesst vergessen missachte ignoriere ignoriert dimentica dimenticare dimentichi esqueça "
                "esqueca esquecer esqueci забудь забудьте забыть игнорируй игнорируйте проигнорируй vergeet negeer zignoruj zapomnij "
                "unut yoksay bỏ quên lupakan abaikan تجاهل انس 忽 略 忘 记 忘 掉 无 视 無 視 忘 れ 무 시 잊 어",
    "instructions": "instructions instruction directives directive guidelines instr* guide* direc* "
 "consignes règles regles ordres instrucciones reglas órdenes ordenes anweisungen anweisung vorgaben regeln befehle "
 "istruzioni regole ordini instruções instrucoes regras ordens указания инструкции правила команды указаний "
 "instructies regels polecenia instrukcje zasady talimatları talimatlar kurallar تعليمات التعليمات الأوامر "
 "指 示 指 令 规 则 規 則 命 令 지 시 규 칙 명 령",
    "previous": "previous prior earlier preceding previo* earli* précédentes précédents précédent "
                "antérieures anteriores anterior previas vorherigen bisherigen vorigen früheren precedenti "
                "предыдущие прежние предыдущих ранее eerdere vorige wcześniejsze poprzednie önceki السابقة 之 前 以 前 先 前 "
                "이 전",
    "nolimits": "restrictions restriction limits limitations filters filter filtering censorship uncensored unfiltered unrestricted "
                "guardrails safeguards restr* limit* filte* censo* unres* unfil* guard* moderation restrictions sans filtre "
                "restricciones límites limites filtros censura einschränkungen beschränkungen grenzen filter zensur sicherheitsregeln "
                "restrizioni limiti filtri restrições restricoes limites ограничений ограничения цензуры фильтров beperkingen "
                "ograniczeń kısıtlama قيود 限 制 制 限 过 滤 検 閲 제 한 필 터",
    "now_on": "henceforth onward onwards désormais dorénavant ahora jetzt sofort agora "
 "diante теперь отныне voortaan teraz şimdi الآن 现 在 从 现 今 か 지 금 이 제",
    "refuse": "refuse refusals refusal refusing decline reject refus* rechaz* rechaces rechazas refuser refuses rejeter ablehnen "
              "lehne verweigere rifiutare rifiuti recusar recuse recusa отказывай отказываться отклоняй weiger odmawiaj reddetme "
              "ترفض 拒 绝 拒 否 断 ら 거 절",
    "secret": "password passwords passphrase credentials credential secrets passw* crede* secre* "
 "mot passe contraseña contraseñas clave claves passwort kennwort passwörter schlüssel zugangsdaten segreto chiavi "
 "senha senhas chaves пароль пароли паролей ключи ключ секрет wachtwoord hasło hasła şifre كلمة كلمات مرور "
 "密 码 密 钥 秘 钥 パ ス 暗 証 비 밀 암 호",
    "send": "send exfiltrate transmit leak beacon envoie envoyez envoyer transmets "
 "envía envia enviar envíe manda mande schicke schick sende senden übermittle invia inviare manda mandare envie "
 "enviem отправляй отправь отправить пришли перешли stuur wyślij gönder أرسل ارسل 发 送 传 送 送 信 送 っ 보 내 전 송",
    "covert": "secretly quietly silently covertly discreetly hidden unnoticed secre* quiet* silen* discrètement secrètement "
              "discretamente secretamente sigilosamente heimlich unbemerkt nascosto segretamente тайно незаметно скрытно "
              "stiekem potajemnie gizlice سرا سراً 悄 悄 偷 偷 秘 密 こ っ 몰 래",
    "obey": "obey comply obéis obéissez obéir suivez obedece obedecer sigas befolge befolgen gehorche folge "
 "obbedisci segui obedeça obedeca siga слушайся подчиняйся выполняй следуй volg gehoorzaam wykonuj uygula "
 "نفذ نفّذ اتبع 听 从 服 从 遵 循 従 っ 따 르",
    "system": "system systemprompt système sistema systeme systemanweisungen systemnachricht системный системное системные "
              "systeem systemowy sistem النظام 系 统 シ ス 시 스",
    "reveal": "reveal dump revea* displ* révèle révéler affiche montre muestra revela "
 "muéstrame zeige zeig gib ausgeben mostra rivela mostre revele покажи выведи раскрой toon pokaż göster "
 "اعرض اكشف 输 出 显 示 透 露 出 力 表 示 출 력 보 여",
    "urgent": "urgent urgently immediately emergency asap urgen* immed* emerg* urgence immédiatement urgente "
 "inmediatamente dringend sofort notfall urgenza subito imediatamente срочно немедленно spoed pilne acil عاجل "
 "紧 急 立 即 至 急 긴 급",
    "persona": "pretend roleplay persona character pretende finge fais semblant eres bist você ты "
               "假 装 扮 演 ふ り 역 할 척",
    "no_approval": "approval confirmation permission consent approv* confi* permi* "
                   "无 需 不 经 確 認 無 し 확 인 없 이",
}
_LEXICON: dict[str, str] = {}


def _fold(word: str) -> str:
    """A lexicon word as the scored text spells it (:func:`.scan_text.for_matching`, lower-cased: look-alike letters folded)."""
    return for_matching(word).lower()


for _concept, _words in _LEXICON_SRC.items():
    _parts = _words.split()
    _i = 0
    while _i < len(_parts):
        _w = _parts[_i]
        # two one-character CJK/Hangul parts in a row are a bigram feature ("忽 略")
        if len(_w) == 1 and _i + 1 < len(_parts) and len(_parts[_i + 1]) == 1 and not _w.isascii():
            _LEXICON.setdefault(f"{_fold(_w)} {_fold(_parts[_i + 1])}", "§" + _concept)
            _i += 2
            continue
        for _form in (_w, _w.capitalize(), _w.upper()):  # a capital may fold to another letter (Cyrillic "Т" -> "t")
            _LEXICON.setdefault(_fold(_form), "§" + _concept)
        _i += 1
del _concept, _words, _parts, _i, _w, _form


def concepts(toks: list[str], bigrams: list[str], stems: list[str]) -> list[str]:
    """The concept features of a window (:data:`_LEXICON`): each concept its tokens, bigrams or stems
    name (``"§override"``), once, in text order, then every pair of them (``"§instructions+§override"``,
    the two names sorted). At most 15 concepts, so at most 105 pairs."""
    found = list(dict.fromkeys(filter(None, map(_LEXICON.get, chain(toks, bigrams, stems)))))
    return found + [a + "+" + b if a < b else b + "+" + a for i, a in enumerate(found) for b in found[i + 1:]]


def features(low: str) -> set[str]:
    """The binary features of ``low`` (normalised, lower-cased text): unigrams, bigrams, stems, symbol runs."""
    return features_of(_TOKEN.findall(low))


def features_of(toks: list[str]) -> set[str]:
    """:func:`features` of a text whose tokens (``_TOKEN.findall``) are ``toks``.

    The set is filled in one fixed order (tokens, bigrams, stems, :func:`concepts`), which every path here keeps:
    a set's iteration order, and so the float sum of a window's weights, follows its insertions.
    """
    out = set(toks)
    bigrams = list(map(" ".join, zip(toks, toks[1:], strict=False)))
    stems = [t[:_STEM] + "*" for t in toks if len(t) > _STEM and t.isalpha()]
    out.update(bigrams)
    out.update(stems)
    out.update(concepts(toks, bigrams, stems))
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
    out.update(concepts(toks, bigrams, stems))
    yield out
    k = 0
    for line, lt in zip(lines, per_line, strict=True):
        n = len(lt)
        if line.strip():
            feats = set(lt)
            line_bigrams = bigrams[k: k + n - 1] if n else []
            feats.update(line_bigrams)
            feats.update(filter(None, stems[k: k + n]))
            feats.update(concepts(lt, line_bigrams, stems[k: k + n]))
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
