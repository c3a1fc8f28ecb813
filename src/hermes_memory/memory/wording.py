"""The words of the memory tool's results that count things (one place, so the tool, the CLI, MCP
and batches say the same): a batch's summary and a replace that merged two entries.

A replace whose new text equals another entry leaves one entry, not two identical ones (the
reference agent drops the duplicate when it next loads the file; we do it at once) and says so.
"""

from __future__ import annotations

from hermes_memory.wording import count, plural

__all__ = ["MERGED_MESSAGE", "batch_message", "counted", "plural"]

counted = count  # the store has a parameter named ``count``

MERGED_MESSAGE = ("Entry replaced; its new text is the same as another entry's, so the two are now one entry "
                  "(no duplicate kept; merged_with is that entry).")


def batch_message(n_ops: int, skipped: int, merged: int) -> str:
    """``"Applied 3 operations. 1 duplicate add was already present and skipped."`` and, when
    replaces merged entries, a sentence saying so (``merged_entries`` names them)."""
    msg = f"Applied {count(n_ops, 'operation')}."
    if skipped:
        msg += f" {count(skipped, 'duplicate add')} {plural('was', skipped)} already present and skipped."
    if merged:
        msg += (f" {count(merged, 'replace')} gave an entry the text of another entry, so "
                f"{'the two are' if merged == 1 else 'each pair is'} now one entry (no duplicate kept; "
                "merged_entries lists them).")
    return msg

