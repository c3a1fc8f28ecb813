"""Hypothesis strategies for memory-store operations (the property tests on files and on PostgreSQL)."""

from __future__ import annotations

from hypothesis import strategies as st

# Text with the characters that matter: §, CR/LF, spaces, non-Latin letters, an emoji.
_alphabet = st.sampled_from(list("ab §\n\r\t한é🙂x-;") + ["\n§\n", "§\n", "\n§"])
_text = st.lists(_alphabet, min_size=0, max_size=12).map("".join)
_target = st.sampled_from(["memory", "user"])
memory_ops = st.one_of(
    st.tuples(st.just("add"), _target, _text),
    st.tuples(st.just("replace"), _target, _text, _text),
    st.tuples(st.just("remove"), _target, _text),
    st.tuples(
        st.just("batch"),
        _target,
        st.lists(
            st.fixed_dictionaries(
                {"action": st.sampled_from(["add", "replace", "remove"]), "content": _text, "old_text": _text}
            ),
            min_size=1,
            max_size=4,
        ),
    ),
)
"""One store operation: ``(action, target, text[, text])`` or ``("batch", target, [ops])``."""
