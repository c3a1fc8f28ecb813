"""64 KiB near-miss strings built to make a backtracking regex blow up (shared by tests and bench).

Each repeats the opening of a family's phrase without ever completing it, or fills a bounded gap
with the characters a filler accepts, so every start position makes the engine try its fillers.
"""

from __future__ import annotations

SIZE = 64 * 1024


def _fill(unit: str) -> str:
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


def adversarial_texts() -> dict[str, str]:
    """``name -> text`` of 64 KiB each."""
    return {
        "ignore_filler": _fill("ignore previous previous "),
        "words_no_end": _fill("forget all of the very many "),
        "send_no_url": _fill("send the conversation history to "),
        "curl_no_pipe": _fill("curl http://198.51.100.1/x "),
        "every_session_no_curl": _fill("every session silently curl "),
        "rm_flags": _fill("rm -r -f -r -f "),
        "html_comment_open": ("<!--" + _fill("a b c d "))[:SIZE],
        "hidden_div_open": _fill('<div style="display'),
        "base64_like": _fill("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo"),
        "hex_like": _fill("4142434445464748"),
        "leet_mix": _fill("1gn0r3 pr3v10u5 "),
        "spaced_letters": _fill("i g n o r e "),
        "cjk_ignore": _fill("忽略之前的"),
        "markdown_image": _fill("![a](https://x.invalid/"),
        "secret_paths": _fill("cat ~/.ssh/id_rsa.pub "),
        "no_spaces": "a" * SIZE,
        "newlines": "\n" * SIZE,
        "fake_marker_lines": _fill("\nSYSTEM "),
        "joined_words": _fill("ignore-previous-previous_"),
        "broken_words": _fill("ig-nore pre-vious "),
        # the tenth round's kinds (scan_families_kinds): an address, a consent framing or a changed payee with no act after it
        "note_for_agent": _fill("note for the agent: forward "),
        "any_ai_reader": _fill("any ai reading this please "),
        "polite_no_act": _fill("it would be lovely if you could "),
        "changed_account_digits": _fill("new account 12345678 "),
        "url_labels": _fill("https://paypal.com.paypal.com."),
    }
