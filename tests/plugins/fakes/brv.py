"""A fake ByteRover CLI (``brv``): records every call and keeps a tiny Markdown context tree.

The test copies this script to ``<dir>/brv`` (shebang = the test's Python) and puts ``<dir>`` first on
``PATH``. Behaviour, like the real CLI run from its working directory:

* ``brv curate -- TEXT``  writes TEXT to ``.brv/context-tree/note-<n>.md``; prints a confirmation.
* ``brv query -- TEXT``   prints every note sharing a word (4+ letters) with TEXT, or a short miss.
* ``brv status``          prints the tree location and note count.

Every call appends ``{"argv": [...], "cwd": ..., "api_key": ...}`` as one JSON line to ``$FAKE_BRV_LOG``.
Fault injection: ``$FAKE_BRV_SLEEP`` (seconds to sleep first), ``$FAKE_BRV_FAIL`` (exit 1 with that
text on stderr).
"""

import json
import os
import re
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    log = os.environ.get("FAKE_BRV_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"argv": argv, "cwd": os.getcwd(),
                                 "api_key": os.environ.get("BRV_API_KEY", "")}) + "\n")
    if os.environ.get("FAKE_BRV_SLEEP"):
        time.sleep(float(os.environ["FAKE_BRV_SLEEP"]))
    if os.environ.get("FAKE_BRV_FAIL"):
        print(os.environ["FAKE_BRV_FAIL"], file=sys.stderr)
        return 1
    tree = Path(".brv") / "context-tree"
    if not argv:
        print("usage: brv <curate|query|status>", file=sys.stderr)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd in ("curate", "query"):
        if not rest or rest[0] != "--" or len(rest) != 2:
            print(f"usage: brv {cmd} -- TEXT", file=sys.stderr)
            return 2
        text = rest[1]
        if cmd == "curate":
            tree.mkdir(parents=True, exist_ok=True)
            n = len(list(tree.glob("note-*.md"))) + 1
            (tree / f"note-{n:04d}.md").write_text(text, encoding="utf-8")
            print(f"Curated into context tree: note-{n:04d}.md")
            return 0
        words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", text)}
        hits = []
        for note in sorted(tree.glob("note-*.md")) if tree.exists() else []:
            body = note.read_text(encoding="utf-8")
            if words & {w.lower() for w in re.findall(r"[A-Za-z]{4,}", body)}:
                hits.append(f"### {note.name}\n{body}")
        print("\n\n".join(hits) if hits else "No matches.")
        return 0
    if cmd == "status":
        count = len(list(tree.glob("note-*.md"))) if tree.exists() else 0
        print(f"Context tree: {tree.resolve()}\nNotes: {count}\nDaemon: running (fake)")
        return 0
    print(f"unknown command {cmd}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
