"""Context compaction inside the agent: compress the history, undo a failed attempt, and split the session so the compacted history continues in a child session (lineage)."""

from __future__ import annotations

import logging
from typing import Any

from hermes_memory.agent.host import AgentHost
from hermes_memory.agent.session_ids import new_session_id
from hermes_memory.context.tokens import estimate_messages_tokens_rough
from hermes_memory.llm.base import (
    Usage,
    message_text,
    strip_private_keys,
)

log = logging.getLogger("hermes_memory.agent.loop")  # the agent's logger, as before the split


class Compaction(AgentHost):
    """Compaction methods of :class:`~hermes_memory.agent.loop.Agent` (a mixin: uses its compressor, database and history)."""

    # ------------------------------------------------------------------ compression
    def compress_context(self, *, reason: str = "manual", focus: str | None = None, force: bool = False) -> bool:
        """Compact the live history; returns True when it shrank and the session was split.

        Order (B34): ``flush_memories(min_turns=0)`` over the full uncompressed history (skipped when
        no user turn happened since the last flush) -> ``on_pre_compress`` -> ``compress`` -> reload
        the memory snapshot and rebuild the system prompt -> end the session with ``compression`` and
        continue in a child session (``parent_session_id``, title ``<title> #N``) holding the compacted
        history. A no-op or aborted compression changes nothing and returns False. So does a SessionDB
        failure during the rotation (logged as a warning): the agent stays on the old session, still
        open, with its uncompressed history and prompt, and does not retry before the next turn
        (unless ``force``).
        """
        if self._rotation_failed_this_turn and not force:
            return False  # SessionDB refused the split this turn: do not pay for another summary now
        full = [{"role": "system", "content": self.system_prompt}, *self.messages]
        plan = self.compressor.plan(full)
        if not plan.will_compress:
            return False
        if self._turns_since_flush > 0 and self._session_created:
            self._flush(min_turns=0)
        pre = self.manager.on_pre_compress(self._plain(self.messages))
        saved = self._compressor_state()
        compacted = self.compressor.compress(full, current_tokens=self.compressor.last_prompt_tokens,
                                             focus_topic=focus, force=force, pre_compress_text=pre or "")
        if self.compressor.last_compress_aborted or len(compacted) >= len(full):
            log.warning("compression (%s) did not shrink the history (%s)", reason,
                        self.compressor.last_stats.get("aborted") or self.compressor.last_stats.get("plan"))
            return False
        new_messages = [m for m in compacted if m.get("role") != "system"]
        if self.store is not None:
            self.store.load_from_disk()
        new_prompt = self._build_system_prompt()
        try:
            self._split_session(new_messages, new_prompt)
        except Exception as exc:  # SessionDB failed mid-rotation: stay on the old, still open session
            self._undo_compression(saved)
            self._rotation_failed_this_turn = True
            log.warning("compression (%s) not applied: could not rotate session %s to a child (%s: %s); "
                        "continuing uncompressed in the same session, the next turn tries again",
                        reason, self.session_id, type(exc).__name__, exc)
            return False
        self.system_prompt = new_prompt
        if self.compressor.compression_count >= 2:
            log.warning("this conversation has been compressed %d times; details from early turns may be lost",
                        self.compressor.compression_count)
        self.compressor.last_prompt_tokens = estimate_messages_tokens_rough(
            [{"role": "system", "content": self.system_prompt}, *new_messages])
        return True

    def _compressor_state(self) -> dict[str, Any]:
        c = self.compressor
        return {"compression_count": c.compression_count, "previous_summary": c.previous_summary,
                "_awaiting_effect": c._awaiting_effect}

    def _undo_compression(self, saved: dict[str, Any]) -> None:
        """Put the compressor back as it was before a compaction that could not be applied, so the next
        plan sees the same history the same way (head, previous summary, anti-thrash state)."""
        for key, value in saved.items():
            setattr(self.compressor, key, value)

    def _lineage_base(self, old: str) -> str:
        title = self.db.get_session_title(old)
        if title:
            return title
        first = next((message_text(m) for m in self.messages if m.get("role") == "user"), "") or "session"
        base = " ".join(first.split())[:48] or "session"
        base = self.db.get_next_title_in_lineage(base)
        try:
            self.db.set_session_title(old, base)
        except ValueError:
            base = f"session {old}"
            self.db.set_session_title(old, base)
        return base

    def _split_session(self, new_messages: list[dict[str, Any]], system_prompt: str) -> None:
        """Continue in a child session holding ``new_messages``; one unit (issue 13 §3).

        Order: lineage title -> create the child (``parent_session_id``) -> its messages in one
        transaction -> end the parent with ``compression``. A failure at any step deletes the child
        if it was created and re-raises: the agent is still on the parent, which is still open.
        The agent's own state changes only after every step succeeded.
        """
        old = self.session_id
        new = new_session_id()
        if self._session_created:
            base = self._lineage_base(old)
            self.db.create_session(new, source=self.source, model=self.model.name, system_prompt=system_prompt,
                                   parent_session_id=old, title=self.db.get_next_title_in_lineage(base))
            try:
                self.db.append_messages(new, [self._row_of(m) for m in new_messages])
                self.db.end_session(old, "compression")
            except BaseException:
                try:
                    self.db.delete_session(new)
                except Exception as exc:  # the child stays behind: say which one
                    log.error("could not remove the half-made child session %s of %s: %s", new, old, exc)
                raise
        self.session_id = new
        self.messages = new_messages
        self._turns_since_flush = 0
        self.session_usage = Usage()
        self.manager.on_session_switch(new, parent_session_id=old)

    @staticmethod
    def _row_of(message: dict[str, Any]) -> dict[str, Any]:
        """``message`` as ``SessionDB.append_messages`` takes it (what :meth:`_persist` stores)."""
        m = strip_private_keys(message)
        row = {k: m[k] for k in ("role", "content", "tool_call_id") if m.get(k) is not None}
        row.setdefault("content", m.get("content"))
        if m.get("tool_calls"):
            row["tool_calls"] = m["tool_calls"]
        if m.get("role") == "tool" and m.get("name"):
            row["tool_name"] = m["name"]
        return row
