"""Import speed of the Claude.ai export and Codex CLI importers, first import and re-import.

Builds, in a temporary folder, a Claude.ai ``conversations.json`` of ``--conversations``
conversations of ``--messages`` messages each, and ``--rollouts`` Codex rollout files of about
``8 * --turns`` lines each (the realistic records of tests/sessions/test_importers_claude_ai_codex.py,
repeated), then imports each ``--repeat`` times into a fresh ``state.db`` and once more on top.

Printed JSON, per format: ``messages`` (imported), ``import_s`` and ``reimport_s`` (median
seconds over the repeats), ``messages_per_s`` (first import), ``reimport_added`` (must be 0).

Usage: ``python bench/importers.py [--conversations 500 --messages 100 --rollouts 200 --turns 50 --repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for the realistic records of the importer tests

from tests.sessions.test_importers_claude_ai_codex import claude_ai_export, codex_rollout  # noqa: E402

from hermes_memory.sessions.db import SessionDB  # noqa: E402
from hermes_memory.sessions.importers import import_path  # noqa: E402
from hermes_memory.sessions.importers.claude_ai import ROOT_PARENT  # noqa: E402


def build_claude_ai(folder: Path, conversations: int, messages: int) -> Path:
    base = claude_ai_export()[0]
    convs = []
    for i in range(conversations):
        conv = {**base, "uuid": f"conv-{i:06d}", "name": f"Conversation {i}"}
        conv["chat_messages"] = [
            {"uuid": f"{i}-{j}", "sender": "human" if j % 2 == 0 else "assistant", "created_at": "2025-09-14T08:00:01Z",
             "text": f"message {j} of conversation {i} about sourdough hydration",
             "content": [{"type": "text", "text": f"message {j} of conversation {i} about sourdough hydration"}],
             "parent_message_uuid": f"{i}-{j - 1}" if j else ROOT_PARENT, "attachments": [], "files": []}
            for j in range(messages)
        ]
        convs.append(conv)
    path = folder / "conversations.json"
    path.write_text(json.dumps(convs), encoding="utf-8")
    return path


def build_codex(folder: Path, rollouts: int, turns: int) -> Path:
    root = folder / "sessions" / "2025" / "10" / "29"
    root.mkdir(parents=True)
    lines = codex_rollout()
    for k in range(rollouts):
        sid = f"00000000-0000-4000-8000-{k:012d}"
        meta = json.loads(json.dumps(lines[0]))
        meta["payload"]["id"] = sid
        body = [meta, lines[1]] + lines[2:] * turns
        (root / f"rollout-2025-10-29T00-59-38-{sid}.jsonl").write_text(
            "".join(json.dumps(x) + "\n" for x in body), encoding="utf-8")
    return folder / "sessions"


def measure(path: Path, fmt: str, repeat: int, work: Path) -> dict[str, float | int]:
    firsts, agains, messages, added = [], [], 0, 0
    for r in range(repeat):
        db = SessionDB(work / f"{fmt}-{r}.db")
        try:
            t = time.perf_counter()
            report = import_path(db, path, fmt)
            firsts.append(time.perf_counter() - t)
            t = time.perf_counter()
            again = import_path(db, path, fmt)
            agains.append(time.perf_counter() - t)
        finally:
            db.close()
        messages, added = report.messages_imported, max(added, again.messages_imported)
    first = statistics.median(firsts)
    return {"messages": messages, "import_s": round(first, 3), "reimport_s": round(statistics.median(agains), 3),
            "messages_per_s": round(messages / first), "reimport_added": added}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--conversations", type=int, default=500)
    ap.add_argument("--messages", type=int, default=100)
    ap.add_argument("--rollouts", type=int, default=200)
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        export = build_claude_ai(work, args.conversations, args.messages)
        codex = build_codex(work / "codex", args.rollouts, args.turns)
        print(json.dumps({"claude_ai": measure(export, "claude_ai", args.repeat, work),
                          "codex": measure(codex, "codex", args.repeat, work)}, indent=2))


if __name__ == "__main__":
    main()
