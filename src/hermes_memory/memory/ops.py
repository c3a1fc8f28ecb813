"""Validation and matching of memory operations, independent of where entries are stored.

Every written field is normalised once (str, LF line ends, stripped), validated and threat-scanned
here, and that exact string is what a backend stores (failure case B13). ``old_text`` matching
follows docs/reference.md §1 plus the typed form of issue 13 §2 (:func:`.entries.match_key`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import compress, count, repeat
from operator import contains
from typing import Any

from hermes_memory.memory.entries import (
    BLOCKED_PREFIX,
    match_key,
    normalise_newlines,
    preview,
    sanitise_entry,
)
from hermes_memory.memory.scan import scan_memory_content

_DELIM_LINE = re.compile(r"(?m)^§$")


def clean_content(content: Any, empty_message: str) -> tuple[str, str | None]:
    """Normalise one written field once: str, LF line ends, stripped; then validate and scan it.

    Returns ``(text, None)`` when it may be written, ``("", reason)`` when not: empty, not valid
    Unicode (a lone surrogate, which UTF-8 cannot hold), holding the reserved delimiter line, starting with the ``[BLOCKED:`` marker, or a threat-scan hit (the
    reason then starts with ``"Blocked"``).
    """
    if content is None:
        return "", empty_message
    text = normalise_newlines(str(content)).strip()
    if not text:
        return "", empty_message
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return "", (
            f"Content is not valid Unicode text: character {exc.start + 1} is a lone surrogate "
            f"(U+{ord(text[exc.start]):04X}), which is what undecodable bytes (text that is not UTF-8, "
            "e.g. a shell argument in another encoding) or a half emoji escape become; memory files hold "
            "UTF-8 only. Retype the text in UTF-8."
        )
    if "§" in text and _DELIM_LINE.search(text):
        return "", (
            "Content contains the reserved entry delimiter (a line holding only '§'; entries are "
            "separated by '\\n§\\n'). Keep § on a line with other text, or save the parts as "
            "separate entries."
        )
    if text.startswith(BLOCKED_PREFIX):
        return "", "Content may not start with '[BLOCKED:', a marker reserved for the system. Rephrase the note."
    blocked = scan_memory_content(text)
    if blocked:
        return "", blocked
    return text, None


def normalise_op(raw: Any) -> tuple[dict[str, Any], str | None]:
    """One batch operation as ``{"action", "old_text"?, "content"?}`` (content cleaned), or ``({}, reason)``.

    ``new_text`` is an alias of ``content`` (``content`` wins unless it is empty).
    """
    if not isinstance(raw, Mapping):
        return {}, "each operation must be an object like {\"action\": \"add\", \"content\": \"...\"}."
    action = raw.get("action")
    if action not in ("add", "replace", "remove"):
        return {}, f"Unknown action '{action}'. Use: add, replace, remove"
    content = raw.get("content")
    if content is None or (isinstance(content, str) and not content.strip()):
        content = raw.get("new_text") if raw.get("new_text") is not None else content
    op: dict[str, Any] = {"action": action}
    if action in ("replace", "remove"):
        old = raw.get("old_text")
        if old is None or not str(old).strip():
            return {}, f"old_text is required for '{action}' and must be non-empty."
        op["old_text"] = str(old)
    if action in ("add", "replace"):
        msg = "content is required for 'add'." if action == "add" else "content is required for 'replace' (use 'remove' to delete)."
        text, err = clean_content(content, msg)
        if err:
            return {}, err
        op["content"] = text
    return op, None


def match_entry(
    entries: list[str], old_text: str, *, new_content: str | None, name: str, exact: bool = False
) -> tuple[int, dict[str, Any] | None]:
    """Index of the entry addressed by ``old_text`` or a failure dict (no match / ambiguous).

    ``exact``: only an entry equal to ``old_text`` (line breaks folded to LF, stripped) is addressed,
    never one that merely contains it: a form that shows an entry (the dashboard) acts on that entry
    or on nothing, so an entry another writer rewrote since is never removed or overwritten.

    An entry equal to ``old_text`` (stripped) wins; else the entries containing it (case-sensitive);
    when nothing matches as typed, the same two steps run on the :func:`match_key` forms. A model
    only ever sees a poisoned entry as its ``[BLOCKED: ...]`` placeholder, so that exact placeholder
    text also addresses it (the first such entry). Previews in an ambiguity error are an echo and
    use the same sanitiser (``name`` is the file name shown in placeholders). The failure dict is
    ``{"error", "kind": "no_match"|"ambiguous", "matches"?: [{"index", "preview"}]}``.
    """
    needle = normalise_newlines(old_text).strip()
    if needle in entries:  # the first entry equal to old_text (one C-level scan)
        return entries.index(needle), None
    if exact:
        return -1, {"error": f"No entry is '{preview(needle)}' any more: it was changed or removed since it was "
                    "shown. Nothing was changed; reload to see the entries as they are now.", "kind": "no_match"}
    hits = list(compress(count(), map(contains, entries, repeat(needle))))  # entries holding it, in C
    if len(hits) == 1:
        return hits[0], None
    if not hits:  # the typed form (issue 13 §2): only when nothing matches as written
        key = match_key(needle)
        keys = [match_key(e) for e in entries]
        same = [i for i, k in enumerate(keys) if k == key]
        if len(same) == 1:
            return same[0], None
        hits = same or [i for i, k in enumerate(keys) if key and key in k]
    if not hits and needle.startswith(BLOCKED_PREFIX):
        for i, e in enumerate(entries):
            if sanitise_entry(e, name) == needle:
                return i, None
    if not hits:
        return -1, {"error": f"No entry matched '{preview(needle)}'.", "kind": "no_match"}
    distinct = {entries[i] for i in hits}
    if len(distinct) == 1:
        return hits[0], None
    matches = [{"index": i + 1, "preview": preview(sanitise_entry(entries[i], name))} for i in hits]
    msg = (
        f"Multiple entries matched '{preview(needle)}'. Be more specific: use old_text copied from exactly "
        "one entry (the whole entry text always works). Matching entries: "
        + "; ".join(f"#{m['index']}: {m['preview']}" for m in matches)
    )
    if new_content is not None and new_content in distinct:
        msg += " Note: your new content already exists verbatim as one of these entries — no change is needed."
    return -1, {"error": msg, "kind": "ambiguous", "matches": matches}
