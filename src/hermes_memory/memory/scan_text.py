"""Text views of the memory threat scan: invisible characters, normalisation, leetspeak, decoded runs.

The regexes of :mod:`.scan` never see the raw text. :func:`for_matching` gives the normalised
text (NFKC, default-ignorable characters removed, look-alike letters folded to Latin);
:func:`leet_views` the leetspeak and spelled-out views; :func:`decoded_views` the text hidden in
base64, hex or percent-encoded runs. :func:`find_invisible` checks the raw text for invisible and
bidirectional-control characters (docs/security.md §1).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
import unicodedata

#: Entries longer than this are not scanned at load; the snapshot shows a placeholder instead.
MAX_SCAN_CHARS = 65_536

_INVISIBLE = frozenset(
    [0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x2062, 0x2063, 0x2064]
    + list(range(0x202A, 0x202F))
    + list(range(0x2066, 0x206A))
    # C0 controls but tab/LF/CR, DEL and C1 controls: never part of a note, and ESC sequences can
    # hide or restyle text in a terminal (reviewed beyond the reference list).
    + [c for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)]
    + list(range(0x7F, 0xA0))
)
_ZWJ = 0x200D
#: ZERO WIDTH NON-JOINER: part of ordinary Persian, Kurdish, Urdu and Indic spelling (می‌آید), so
#: allowed between two letters of those scripts (Unicode 15, section 23.2 "Cursive Connection").
_ZWNJ = 0x200C
_ZWNJ_SCRIPTS = ((0x0600, 0x06FF), (0x0750, 0x077F), (0x08A0, 0x08FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF), (0x0900, 0x0DFF))
#: The invisible code points and the tag block as one character class (searched in C).
_INVISIBLE_RX = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_INVISIBLE)) + "\U000e0000-\U000e007f]")
#: Unicode tag characters: invisible, yet models read them ("ASCII smuggling"). Allowed only in an
#: emoji tag sequence (U+1F3F4 BLACK FLAG, tags, U+E007F CANCEL TAG: the subdivision flags).
_TAGS = range(0xE0000, 0xE0080)
_BLACK_FLAG, _CANCEL_TAG = 0x1F3F4, 0xE007F
#: Removed before the regexes run (invisible, so they could split a key word without being seen):
#: format characters (Cf) and the other default-ignorable code points.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e0fff]"
)
#: Cyrillic and Greek letters that look like Latin ones, folded for matching only.
_HOMOGLYPHS = str.maketrans(
    "аеіјосрѕухԁһӏԛԝɡαιοκνρυχτ" "АВЕІЈКМНОРСЅТХΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeijocpsyxdhlqwgaiokvpuxt" "ABEIJKMHOPCSTXABEZHIKMNOPTYX",
)
_EMOJI_MODIFIERS = frozenset([0xFE0F, 0xFE0E] + list(range(0x1F3FB, 0x1F400)))


def _is_emoji(cp: int) -> bool:
    return (
        0x1F000 <= cp <= 0x1FAFF
        or 0x2600 <= cp <= 0x27BF
        or 0x2300 <= cp <= 0x23FF
        or 0x2B00 <= cp <= 0x2BFF
        or cp in (0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D)
    )


def _emoji_joiner(text: str, i: int) -> bool:
    """True when the U+200D at ``text[i]`` sits between two emoji (modifiers skipped)."""
    j = i - 1
    while j >= 0 and ord(text[j]) in _EMOJI_MODIFIERS:
        j -= 1
    if j < 0 or not _is_emoji(ord(text[j])):
        return False
    return i + 1 < len(text) and _is_emoji(ord(text[i + 1]))


def _script_joiner(text: str, i: int) -> bool:
    """True when the U+200C at ``text[i]`` sits between two letters (or marks) of a script that spells with it."""
    if i == 0 or i + 1 >= len(text):
        return False

    def ok(c: str) -> bool:
        return any(lo <= ord(c) <= hi for lo, hi in _ZWNJ_SCRIPTS) and (c.isalpha() or unicodedata.category(c) in ("Mn", "Mc"))

    return ok(text[i - 1]) and ok(text[i + 1])


def _in_flag_sequence(text: str, i: int) -> bool:
    """True when the tag character at ``text[i]`` belongs to a BLACK FLAG ... CANCEL TAG sequence."""
    j = i
    while j >= 0 and ord(text[j]) in _TAGS and ord(text[j]) != _CANCEL_TAG:
        j -= 1
    if j < 0 or ord(text[j]) != _BLACK_FLAG:
        return False
    k = i
    while k < len(text) and ord(text[k]) in _TAGS and ord(text[k]) != _CANCEL_TAG:
        k += 1
    return k < len(text) and ord(text[k]) == _CANCEL_TAG and k - j <= 8


def find_invisible(text: str) -> str | None:
    """Return the first invisible/bidi control character as ``"U+XXXX"``, or ``None``.

    A ZERO WIDTH JOINER inside an emoji sequence is allowed, so is a ZERO WIDTH NON-JOINER between two
    letters of Arabic-script or Indic text (:data:`_ZWNJ_SCRIPTS`), and so are the tag characters of an
    emoji flag sequence (e.g. the flag of Scotland); any other tag character is invisible.
    """
    for m in _INVISIBLE_RX.finditer(text):
        i = m.start()
        cp = ord(text[i])
        if cp in _INVISIBLE:
            if cp == _ZWJ and _emoji_joiner(text, i):
                continue
            if cp == _ZWNJ and _script_joiner(text, i):
                continue
            return f"U+{cp:04X}"
        if cp in _TAGS:
            if cp == _CANCEL_TAG and i > 0 and ord(text[i - 1]) in _TAGS and _in_flag_sequence(text, i - 1):
                continue
            if cp != _CANCEL_TAG and _in_flag_sequence(text, i):
                continue
            return f"U+{cp:04X}"
    return None


def for_matching(text: str) -> str:
    """The text the regexes see: NFKC, invisible characters dropped, look-alike letters folded."""
    if text.isascii():  # NFKC, the ignorable set and the look-alike table leave ASCII unchanged
        return text
    return _IGNORABLE.sub("", unicodedata.normalize("NFKC", text)).translate(_HOMOGLYPHS)


#: Leetspeak digits and symbols, folded inside words that also hold letters ("1gn0r3" -> "ignore").
#: ``1``, ``|``, ``!`` stand for ``i`` or ``l``: the view folds them *and every l* to ``i``, and the
#: leet copies of the patterns fold their ``l`` the same way, so "ru135" and "1nstruct10ns" both match.
_LEET = str.maketrans("0134578@$|!+", "oieastbasiit")
_LEET_TOKEN = re.compile(r"[A-Za-z0-9@$|!+]{2,}")
#: A view is made only for a letter-symbol-letter run ("n0r", "y0u"): "v2", "3pm" and "s3" do not trigger it.
_HAS_LEET = re.compile(r"[A-Za-z][0-9@$|!+]+[A-Za-z]")
#: Inside a triggered view, every token mixing letters and leet symbols is folded ("4ll" too).
_LEET_MIXED = re.compile(r"[A-Za-z].*[0-9@$|!+]|[0-9@$|!+].*[A-Za-z]")
#: Letters spelled out one by one ("i g n o r e", "i.g.n.o.r.e"): joined in the leetspeak view.
_SPACED = re.compile(r"\b(?:\w[ ._*-]){4,}\w\b")
_SPACED_SEP = re.compile(r"[ ._*-]")
#: Necessary conditions of :data:`_HAS_LEET` and :data:`_SPACED` that start with a character class.
_LEET_QUICK = re.compile(r"[0-9@$|!+][A-Za-z]")
_SPACED_QUICK = re.compile(r"[ ._*-]\w[ ._*-]\w[ ._*-]")


def _join_spaced(m: re.Match[str]) -> str:
    """Join a spelled-out run; when its letters are split by ``-``, ``.``, ``_`` or ``*``, a space still splits words
    ("i-g-n-o-r-e a-l-l" -> "ignore all")."""
    run = m.group()
    if any(c in run for c in "._*-"):
        return " ".join(_SPACED_SEP.sub("", w) for w in run.split(" "))
    return _SPACED_SEP.sub("", run)


#: Three or more words of three or more letters joined into one token by ``-`` or ``_``
#: ("ignore-previous-instructions", "ignore_previous_instructions"): split into words in the joined
#: view. Shorter parts are left joined: command names such as ``ssh-copy-id`` stay one word.
_JOINED = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{3,}(?:[-_][A-Za-z]{3,}){2,}(?![A-Za-z0-9])")
#: A word cut in two by a hyphen ("ig-nore pre-vious in-structions"): rejoined in the joined view
#: when the text has at least :data:`_MIN_BROKEN` of them (one "read-only" makes no view).
_BROKEN = re.compile(r"(?<![A-Za-z0-9-])([A-Za-z]+)-([A-Za-z]+)(?![A-Za-z0-9-])")
_MIN_BROKEN = 2
#: Necessary condition of both: a letter, ``-`` or ``_``, a letter.
_JOINED_QUICK = re.compile(r"[A-Za-z][-_][A-Za-z]")


def joined_views(norm: str) -> list[str]:
    """Views of ``norm`` with words joined by hyphens or underscores taken apart (a token of three
    or more words split at each ``-``/``_``), and with words cut by a hyphen rejoined (when there are
    two or more): the spellings a user trial stored past the scan ("ignore-previous-instructions",
    "ig-nore pre-vious in-structions"). ``[]`` when neither changes the text."""
    if _JOINED_QUICK.search(norm) is None:
        return []
    views = []
    split = _JOINED.sub(lambda m: re.sub(r"[-_]", " ", m.group()), norm)
    if split != norm:
        views.append(split)
    if next(itertools.islice(_BROKEN.finditer(norm), _MIN_BROKEN - 1, None), None) is not None:
        views.append(_BROKEN.sub(r"\1\2", norm))
    return views


def leet_views(norm: str) -> list[str]:
    """Extra views of ``norm``: spelled-out letters joined, and (lower-cased, ``l`` -> ``i``) leetspeak folded.

    A view whose text has ``l`` folded is matched with the leet copies of the patterns (see
    :func:`_family_hits`); it is recognised by having no ``l`` left.
    """
    # The quick forms start with a character class, so the engine skips ahead in C.
    has_leet = _LEET_QUICK.search(norm) is not None and _HAS_LEET.search(norm) is not None
    has_spaced = _SPACED_QUICK.search(norm) is not None and _SPACED.search(norm) is not None
    if not (has_leet or has_spaced):
        return []
    base = _SPACED.sub(_join_spaced, norm) if has_spaced else norm
    if not has_leet:
        return [base]

    def fold(m: re.Match[str]) -> str:
        tok = m.group()
        return tok.translate(_LEET) if _LEET_MIXED.search(tok) else tok

    return [_LEET_TOKEN.sub(fold, base).lower().replace("l", "i")]


#: Encoded runs worth decoding: base64 (16+ chars), hex (16+ digits, also ``\x41`` escapes), %XX.
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])|(?:\\x[0-9A-Fa-f]{2}){6,}")
#: A token this long (or an escape) is needed before any decoding is tried.
_LONG_TOKEN = re.compile(r"[^\s]{16}|\\x|%[0-9A-Fa-f]{2}")
_PCT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2}[^%\s]{0,3}){6,}")
#: At most this many encoded runs are decoded per text (a 64 KiB blob of them stays cheap).
_MAX_DECODES = 8


def _printable(raw: bytes) -> str | None:
    """``raw`` as text when it reads as text (UTF-8, mostly printable, has a space), else ``None``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 8 or " " not in text:
        return None
    good = sum(1 for c in text if c.isprintable() or c in "\n\t")
    return text if good >= 0.95 * len(text) else None


def decoded_views(norm: str) -> list[str]:
    """Texts hidden in base64, hex or percent-encoded runs of ``norm`` that decode to readable text."""
    out: list[str] = []
    if "\\x" not in norm and "%" not in norm and max(map(len, norm.split()), default=0) < 16:
        return out  # no token long enough to hold an encoded run (the cheap form of _LONG_TOKEN)
    if _LONG_TOKEN.search(norm) is None:
        return out
    tries = 0
    for m in _B64_RUN.finditer(norm):
        tries += 1
        if tries > _MAX_DECODES:
            break
        run = m.group().rstrip("=")
        if not (any(c.isdigit() or c in "+/" for c in run) or (run != run.lower() and run != run.upper())):
            continue  # a plain long word
        run = run.replace("-", "+").replace("_", "/")
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4))
        except (binascii.Error, ValueError):
            continue
        text = _printable(raw)
        if text:
            out.append(text)
    for m in _HEX_RUN.finditer(norm):
        tries += 1
        if tries > 2 * _MAX_DECODES:
            break
        digits = m.group().replace("\\x", "")
        try:
            text = _printable(bytes.fromhex(digits[: len(digits) // 2 * 2]))
        except ValueError:
            continue
        if text:
            out.append(text)
    pct = _PCT_RUN.search(norm)
    if pct:
        from urllib.parse import unquote

        out.append(unquote(pct.group()))
    return out

