"""The entry format of the curated memory, shared by every storage backend (docs/reference.md §1, §11).

A target (``memory`` -> MEMORY.md, ``user`` -> USER.md) holds entries joined by
:data:`ENTRY_DELIMITER` (``"\\n§\\n"``), no trailing newline; no entries is the empty string. Limits
are characters (not bytes) of that joined string, the 3-char delimiters included. This module is
pure text: parsing, limits, the prompt sanitiser and the rendered system-prompt block, so the file
and the PostgreSQL backends render byte-identical blocks for the same entries.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from hermes_memory.config import DEFAULT_MEMORY_CHAR_LIMIT, DEFAULT_USER_CHAR_LIMIT  # noqa: F401 - one definition
from hermes_memory.memory.scan import MAX_SCAN_CHARS, find_threats

ENTRY_DELIMITER = "\n§\n"
TARGETS = ("memory", "user")
FILE_NAMES = {"memory": "MEMORY.md", "user": "USER.md"}
BLOCKED_PREFIX = "[BLOCKED:"
_RULE = "═" * 46
_HEADERS = {"memory": "MEMORY (your personal notes)", "user": "USER PROFILE (who the user is)"}
_SAFE_USER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")


def validate_user_id(user_id: str | None) -> str | None:
    """Return ``user_id`` if it is a safe single path component, else raise ``ValueError``.

    Allowed: 1-128 chars of letters, digits, ``.``, ``_``, ``@``, ``-``, starting with a letter or
    digit (so no ``..``, ``/``, hidden names or empty strings).
    """
    if user_id is None:
        return None
    if not isinstance(user_id, str) or not _SAFE_USER_ID.fullmatch(user_id):  # fullmatch: "$" allows a final \n
        raise ValueError(
            f"unsafe user_id {user_id!r}: it becomes a folder name under memories/users/, so use 1-128 "
            "letters, digits, '.', '_', '@' or '-', starting with a letter or digit (no '/', no '..')."
        )
    return user_id


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


#: Typographic variants folded by :func:`match_key`: dashes to "-", quotes to ' and ".
_TYPO = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b\ufe58\ufe63\uff0d", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u0060\u00b4\uff07", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb\uff02", '"'),
    **dict.fromkeys("\u00ad\u200b\u200c\u2060\ufeff", None),
})
_DASH_RUN = re.compile(r"-{2,}")
_SPACE_RUN = re.compile(r"\s+")


def match_key(text: str) -> str:
    """The form ``old_text`` and entries are compared in when the text as typed matches nothing.

    NFKC (full-width letters, ligatures, no-break spaces), every dash and ``--`` / ``---`` folded
    to ``-``, curly and angle quotes folded to straight ones, soft hyphens and zero-width spaces
    dropped, runs of whitespace (line ends included) collapsed to one space, ends stripped; case is
    kept. Used for matching only: the stored text is never rewritten.
    """
    text = unicodedata.normalize("NFKC", text).translate(_TYPO)
    return _SPACE_RUN.sub(" ", _DASH_RUN.sub("-", text)).strip()


def parse_entries(text: str) -> list[str]:
    """Split file text into entries: split on the full delimiter, strip, drop empties, dedupe (first kept)."""
    pieces = [piece.strip() for piece in normalise_newlines(text).split(ENTRY_DELIMITER)]
    if "" not in pieces and len(set(pieces)) == len(pieces):
        return pieces  # the form this store writes: nothing to drop (the common case, one pass)
    seen: set[str] = set()
    out: list[str] = []
    for piece in pieces:
        if piece and piece not in seen:
            seen.add(piece)
            out.append(piece)
    return out


def joined_len(entries: Sequence[str]) -> int:
    """Characters of ``"\\n§\\n".join(entries)`` without building the string."""
    if not entries:
        return 0
    return sum(map(len, entries)) + len(ENTRY_DELIMITER) * (len(entries) - 1)


@lru_cache(maxsize=1024)  # pure; built for every write's result (issue 13 §6)
def usage_text(chars: int, limit: int) -> str:
    """``"P% — C/L chars"`` with ``P = min(100, int(chars / limit * 100))`` (the reference's usage string)."""
    pct = min(100, int(chars / limit * 100))
    return f"{pct}% — {chars:,}/{limit:,} chars"


def preview(entry: str, width: int = 80) -> str:
    """``entry`` on one line, cut to ``width`` characters plus ``...`` (ambiguity and no-match errors)."""
    flat = " ".join(entry.split())
    return flat if len(flat) <= width else flat[:width] + "..."


def sanitise_entry(entry: str, file_name: str) -> str:
    """The text of ``entry`` fit for a prompt or an error echo.

    Every entry is scanned whatever its prefix (failure case B12); a hit becomes a placeholder made
    here, naming the threat ids but not the payload. Entries over 65,536 chars are not scanned and
    are replaced by a "too large to scan" placeholder.
    """
    if len(entry) > MAX_SCAN_CHARS:
        return (
            f"[BLOCKED: {file_name} entry is too large to scan ({len(entry):,} chars). Removed from system "
            "prompt; shorten it with memory(action=replace) or delete it with memory(action=remove).]"
        )
    hits = find_threats(entry)
    if not hits:
        return entry
    return (
        f"[BLOCKED: {file_name} entry contained threat pattern(s): {', '.join(hits)}. Removed from system "
        "prompt; use memory(action=remove) with old_text from this entry to delete it.]"
    )


def render_block(target: str, entries: Sequence[str], limit: int) -> str:
    """The system-prompt block of ``target`` for ``entries`` under ``limit`` chars ("" when there are none).

    A rule, ``"<HEADER> [P% — C/L chars]"`` (plus ``" ⚠ OVER BUDGET"``), a rule, then the sanitised
    entries joined by the delimiter; a body longer than ``max(2 * limit, 4000)`` chars keeps its
    first 70 % and last 20 % around a truncation note. Pure: every backend renders through it.
    """
    if not entries:
        return ""
    chars = joined_len(entries)
    header = f"{_HEADERS[target]} [{usage_text(chars, limit)}]"
    if chars > limit:
        header += " ⚠ OVER BUDGET"
    name = FILE_NAMES[target]
    body = ENTRY_DELIMITER.join(sanitise_entry(e, name) for e in entries)
    cap = max(2 * limit, 4000)
    if len(body) > cap:
        head, tail = body[: int(cap * 0.7)], body[-int(cap * 0.2):]
        body = (
            f"{head}\n[... {len(body) - len(head) - len(tail):,} chars truncated from the middle; "
            f"{name} is over budget, consolidate it ...]\n{tail}"
        )
    return f"{_RULE}\n{header}\n{_RULE}\n{body}"


def drift_reason(text: str, entries: Sequence[str], limit: int) -> tuple[str, int] | None:
    """Why stored ``text`` is not in the form this store writes, or ``None`` when it is.

    ``("too_big", chars)``: an entry is longer than the whole ``limit`` (someone pasted text without
    delimiters); ``("format", 0)``: blank lines or spaces around a delimiter line, or an empty entry
    (typical of an editor). ``text`` is the newline-normalised stored text, ``entries`` its parse.
    Rewriting such text would silently reformat what a person wrote, so mutations other than a
    single add are refused (the drift guard).
    """
    if entries and max(map(len, entries)) > limit:
        return "too_big", next(len(e) for e in entries if len(e) > limit)
    if len(text) == joined_len(entries):
        return None  # equal lengths: no piece was stripped, dropped or deduplicated by the parse
    pieces = [p.strip() for p in text.split(ENTRY_DELIMITER)]
    canonical = ENTRY_DELIMITER.join(p for p in pieces if p)
    if canonical != text.strip():
        return "format", 0
    return None
