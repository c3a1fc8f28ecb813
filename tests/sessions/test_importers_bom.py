"""Files saved by Windows editors start with a UTF-8 byte-order mark: every importer reads them as without."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import import_path

BOM = b"\xef\xbb\xbf"


def test_an_openai_jsonl_file_with_a_bom_imports_its_first_record(db: SessionDB, tmp_path: Path) -> None:
    f = tmp_path / "chats.jsonl"
    first = {"id": "bom-1", "messages": [{"role": "user", "content": "the first line carries the mark"}]}
    second = {"id": "bom-2", "messages": [{"role": "user", "content": "the second line does not"}]}
    f.write_bytes(BOM + (json.dumps(first) + "\n" + json.dumps(second) + "\n").encode("utf-8"))
    rep = import_path(db, f, "openai")
    assert rep.errors == [] and rep.sessions_created == 2
    assert db.get_messages("openai-bom-1")[0]["content"] == "the first line carries the mark"


def test_a_locomo_file_with_a_bom_imports_as_without_one(db: SessionDB, tmp_path: Path) -> None:
    data = [{"sample_id": "conv-b", "qa": [], "conversation": {
        "speaker_a": "Ana", "speaker_b": "Ben", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "A byte-order mark is no reason to fail."}]}}]
    f = tmp_path / "locomo.json"
    f.write_bytes(BOM + json.dumps(data).encode("utf-8"))
    rep = import_path(db, f, "locomo")
    assert rep.sessions_created == 1 and rep.messages_imported == 1
