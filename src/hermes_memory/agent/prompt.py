"""System prompt assembly and the guidance texts the agent gives the model (our own wording).

The system prompt is built once per session (and again only after a compression) from:
identity, memory guidance (full, or profile-only when only ``USER.md`` is enabled),
session-search guidance, and the memory manager's blocks (the frozen MEMORY/USER snapshots of the
built-in provider plus the external provider's ``system_prompt_block``). Nothing in it depends on
the clock or on writes made during the session, so the prompt is byte-identical for the whole
session and the provider's prompt cache keeps serving it (docs/reference.md §0, §8).
"""

from __future__ import annotations

DEFAULT_IDENTITY = (
    "You are a helpful assistant with a persistent memory. You remember the user across sessions "
    "through the memory files shown below and can look up earlier conversations. Answer directly and "
    "use tools when they help."
)

MEMORY_GUIDANCE = (
    "## Memory\n"
    "You have a `memory` tool with two stores that outlive this conversation: `memory` (your own notes "
    "about the environment, conventions and lessons learned) and `user` (who the user is: name, role, "
    "preferences, how they want you to work). Their contents as of the start of this session appear "
    "below; changes you make are saved at once but show up here only in the next session.\n"
    "- Save only what will still be true and useful in a future session: facts about the user, their "
    "stated preferences and corrections, stable facts about their setup, standing conventions. "
    "Corrections and preferences matter most.\n"
    "- Do not save task progress, one-off details, logs or anything that will be stale within a week; "
    "the session history keeps those and can be searched.\n"
    "- Write short declarative facts (\"User prefers tabs\"), not instructions to yourself.\n"
    "- Each store has a hard character budget. When a write is refused for space, merge or drop older "
    "entries and retry in one batch; do not silently give up on something important.\n"
    "- Prefer one call with `operations` over several calls."
)

USER_PROFILE_GUIDANCE = (
    "## User profile\n"
    "You have a `memory` tool limited to the `user` store: a short profile of who the user is and how "
    "they want you to work. Its contents as of the start of this session appear below. Save stated "
    "preferences, corrections and stable personal facts as short declarative sentences; skip task "
    "details. The store has a hard character budget: consolidate rather than skip."
)

SESSION_SEARCH_GUIDANCE = (
    "## Past conversations\n"
    "Every earlier session is recorded. Before asking the user to repeat something they may have told "
    "you before, or when they refer to earlier work (\"like last time\", \"the bug we fixed\"), call "
    "`session_search` with a few keywords and use what it finds."
)

NUDGE_REVIEW_PROMPT = (
    "[Memory review] Look back over this conversation. If the user revealed something about "
    "themselves (who they are, their situation, their preferences) or told you how they want you to "
    "behave, and it is not already in memory, save it now with the `memory` tool using `add` "
    "(target `user` for facts about the user, `memory` for standing conventions). Only add; do not "
    "replace or remove anything. Save nothing about the task itself. Only the `memory` tool may be "
    "used in this review: calls to any other tool are refused and not run. If there is nothing worth "
    "keeping, answer exactly: Nothing to save."
)

FLUSH_PROMPT = (
    "[Memory flush] This conversation is about to be compressed or closed, and the older messages "
    "will no longer be visible to you. Save anything worth keeping across sessions now with the "
    "`memory` tool: first the user's preferences and corrections, then recurring patterns and stable "
    "facts about their setup. Skip task progress and one-off details. Only the `memory` tool may be "
    "used in this step: calls to any other tool are refused and not run. If nothing qualifies, reply "
    "\"Nothing to save.\" without calling a tool."
)

FLUSH_FORCED_NOTE = (
    "This step requires a `memory` call. If nothing qualifies, call it with `operations` set to an "
    "empty list: that saves nothing."
)


def build_system_prompt(*, identity: str | None = None, memory_enabled: bool = True,
                        user_profile_enabled: bool = True, session_search_enabled: bool = True,
                        memory_blocks: str = "") -> str:
    """Assemble the system prompt (a string; sections joined by one blank line).

    ``memory_blocks`` is ``MemoryManager.build_system_prompt()``: the frozen snapshots and the external
    provider's block. Guidance for the memory tool is included only when a store is enabled; the
    profile-only wording when only ``user_profile_enabled`` is set.
    """
    parts = [(identity or DEFAULT_IDENTITY).strip()]
    if memory_enabled:
        parts.append(MEMORY_GUIDANCE)
    elif user_profile_enabled:
        parts.append(USER_PROFILE_GUIDANCE)
    if session_search_enabled:
        parts.append(SESSION_SEARCH_GUIDANCE)
    if memory_blocks and memory_blocks.strip():
        parts.append(memory_blocks.strip("\n"))
    return "\n\n".join(parts)
