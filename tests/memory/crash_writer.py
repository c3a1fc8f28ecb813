"""Writer process for the crash-safety test: applies a deterministic op sequence until killed.

``python crash_writer.py MEMORY_DIR`` prints ``ready`` and then mutates forever, continuing the
sequence from whatever committed state is on disk. Op ``i`` adds :func:`entry` ``(i)``, except
every 4th op, which removes the oldest entry, so every committed state is the run of added
entries between two indexes (see :func:`expected_entries`).
"""

from __future__ import annotations

import sys


def is_remove(i: int) -> bool:
    return i % 4 == 3


def entry(i: int) -> str:
    return f"entry-{i:06d}-" + "x" * (i % 50)


def committed_states(n: int) -> dict[tuple[int, int], int]:
    """Map (first added index, last added index) -> op index, for every state after ops ``0..n-1``.

    The empty state is ``(-1, -1)`` (op index -1).
    """
    adds: list[int] = []
    start = 0
    out = {(-1, -1): -1}
    for i in range(n):
        if is_remove(i):
            start += 1
        else:
            adds.append(i)
        out[(adds[start], adds[-1]) if start < len(adds) else (-1, -1)] = i
    return out


def expected_entries(first: int, last: int) -> list[str]:
    if first < 0:
        return []
    return [entry(k) for k in range(first, last + 1) if not is_remove(k)]


def main(memory_dir: str) -> None:
    from hermes_memory.memory import MemoryStore

    store = MemoryStore(memory_dir, memory_char_limit=10_000_000)
    ents = store.memory_entries
    key = (int(ents[0][6:12]), int(ents[-1][6:12])) if ents else (-1, -1)
    i = committed_states(50_000)[key] + 1
    print("ready", flush=True)
    while True:
        if is_remove(i):
            r = store.remove("memory", store.memory_entries[0])
        else:
            r = store.add("memory", entry(i))
        if not r["success"]:
            raise SystemExit(f"op {i} failed: {r}")
        i += 1


if __name__ == "__main__":
    main(sys.argv[1])
