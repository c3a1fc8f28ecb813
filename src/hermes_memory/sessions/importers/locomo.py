"""LoCoMo conversations (``locomo10.json`` layout, Maharana et al., ACL 2024) for evaluation.

Each conversation ``sample_id`` becomes one SessionDB session per ``session_<n>``:
id ``locomo-<sample_id>-s<n>``, source ``locomo``, ``user_id`` = ``sample_id`` (so a search can be
limited to one conversation), ``started_at`` from ``session_<n>_date_time`` (e.g. "1:56 pm on 8
May, 2023", read as UTC), title ``"<sample_id> session <n>"``. Turn ``t`` (1-based, ``dia_id``
``D<n>:<t>``) is the ``t``-th message of its session, one second after the previous one. The
first speaker (``speaker_a``) is ``user``, the other ``assistant``; content is ``"<speaker>:
<text>"`` plus ``" [shares a photo: <blip_caption>]"`` for image turns, since the speaker's name
and the shared photo are part of what was said.

Malformed turns (not an object, no text) are reported and imported as empty placeholders
``"<speaker>: "`` so that turn positions keep matching ``dia_id`` numbers.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import ImportReport, Progress, load_json_list, store_session

_SESSION_KEY = re.compile(r"^session_(\d+)$")


def parse_locomo_date(text: str | None) -> float | None:
    """``"1:56 pm on 8 May, 2023"`` -> epoch seconds (UTC), or ``None`` if unreadable."""
    if not text:
        return None
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    return None


def session_id_for(sample_id: str, n: int) -> str:
    """SessionDB id of session ``n`` of conversation ``sample_id``."""
    return f"locomo-{sample_id}-s{n}"


def turn_content(turn: dict[str, Any]) -> str:
    """The message text stored for one LoCoMo turn (see module doc)."""
    text = f"{turn.get('speaker', '?')}: {turn.get('text') or ''}"
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def import_path(db: SessionDB, path: Path, progress: Progress | None = None) -> ImportReport:
    """Import every conversation of a LoCoMo JSON file. See the module docstring."""
    report = ImportReport(format="locomo", path=str(path))
    try:
        data, too_deep = load_json_list(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        report.errors.append(f"{path}: not a LoCoMo JSON file: {exc}")
        return report
    if not isinstance(data, list):
        report.errors.append(f"{path}: expected a JSON list of conversations, got {type(data).__name__}")
        return report
    total = len(data)
    for ci, conv in enumerate(data):
        if ci in too_deep:
            report.errors.append(f"{path}:[{ci}]: {too_deep[ci]}")
            continue
        if progress:
            progress(ci, total)
        if not isinstance(conv, dict) or not isinstance(conv.get("conversation"), dict):
            report.errors.append(f"{path}:[{ci}]: conversation without a 'conversation' object, skipped")
            continue
        sample = str(conv.get("sample_id") or f"conv{ci}")
        c = conv["conversation"]
        speaker_a = c.get("speaker_a")
        numbers = sorted(int(m.group(1)) for k in c if (m := _SESSION_KEY.match(k)))
        for n in numbers:
            turns = c.get(f"session_{n}")
            if not isinstance(turns, list):
                report.errors.append(f"{path}:{sample}.session_{n}: not a list of turns, skipped")
                continue
            start = parse_locomo_date(c.get(f"session_{n}_date_time"))
            if start is None:
                report.errors.append(f"{path}:{sample}.session_{n}_date_time: unreadable date, using 0")
                start = 0.0
            messages = []
            for t, turn in enumerate(turns, start=1):
                if not isinstance(turn, dict) or not isinstance(turn.get("text"), str):
                    report.errors.append(f"{path}:{sample}.session_{n}[{t}]: turn without text, kept empty")
                    turn = turn if isinstance(turn, dict) else {}
                role = "user" if turn.get("speaker") == speaker_a else "assistant"
                messages.append({"role": role, "content": turn_content(turn), "timestamp": start + t})
            store_session(
                db,
                report,
                {
                    "id": session_id_for(sample, n),
                    "source": "locomo",
                    "user_id": sample,
                    "title": f"{sample} session {n}",
                    "started_at": start,
                    "ended_at": start + len(turns) + 1,
                    "end_reason": "imported",
                },
                messages,
            )
    if progress:
        progress(total, total)
    return report
