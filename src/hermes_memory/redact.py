"""Redaction of likely credentials in text, and the linear-time block remover it is built on.

One redactor for every place text leaves our hands: text sent to an external memory provider
(``providers.manager``) and the transcript sent to the context summariser plus the summaries
themselves (``context.summary``). Conservative by design: it may miss exotic formats but leaves
ordinary prose alone.

What is replaced (each by ``[REDACTED]`` unless said otherwise):

* PEM private keys, ``-----BEGIN … PRIVATE KEY----- … -----END … PRIVATE KEY-----`` ->
  ``[REDACTED PRIVATE KEY]`` (an unclosed BEGIN is left as it is);
* provider API keys ``sk-…`` / ``pk-…`` / ``rk-…`` (also ``sk-ant-…``, ``sk-proj-…``);
* GitHub (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``), Slack (``xox?-``),
  AWS (``AKIA…``) and Google (``AIza…``) tokens;
* ``Bearer <token>`` -> ``Bearer [REDACTED]``;
* assignments ``api_key=…``, ``access_token: …``, ``auth_token``, ``access_key``, ``token``,
  ``secret``, ``password``, ``passwd`` with a value of 6+ characters -> ``name=[REDACTED]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

PRIVATE_KEY_MARKER = "[REDACTED PRIVATE KEY]"
SECRET_MARKER = "[REDACTED]"

_TOKEN_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:sk|pk|rk)-(?:[A-Za-z0-9]+-)?[A-Za-z0-9_\-]{16,}"), SECRET_MARKER),
    (re.compile(r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}"), SECRET_MARKER),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), SECRET_MARKER),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), SECRET_MARKER),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), SECRET_MARKER),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/\-]{16,}=*"), rf"\1 {SECRET_MARKER}"),
    (re.compile(r"(?i)\b((?:api[_-]?key|access[_-]?(?:token|key)|auth[_-]?token|token|secret|password|passwd)"
                r"\s*[:=]\s*)['\"]?[^\s'\"]{6,}['\"]?"), rf"\1{SECRET_MARKER}"),
)
# "BEGIN ... [\s\S]*? ... END" blocks are matched by :func:`sub_blocks` (linear time), not by a
# lazy regex, which rescans to the end of the text from every opener that has no closer:
# quadratic (8,000 unclosed BEGIN lines, 216K chars, took 22 s).
_PEM_OPEN = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_PEM_CLOSE = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")
# Cheap pre-check (lower-cased substrings one of the patterns needs): most text has none of them.
_HINTS = ("sk-", "pk-", "rk-", "gh", "github", "xox", "akia", "aiza", "bearer", "private key", "key", "secret",
          "pass", "token")


def sub_blocks(text: str, opener: re.Pattern[str], closer_of: Callable[[re.Match[str]], re.Pattern[str]],
               repl: str) -> str:
    """Replace every ``opener ... closer`` block (shortest, like ``[\\s\\S]*?``) with ``repl``.

    ``closer_of(match)`` gives the closing pattern for an opener match. An opener with no closer
    after it is left as it is. Linear time: once no closer follows an opener, none follows a later
    opener of that kind, so that kind is not searched again."""
    out: list[str] = []
    pos = search = 0
    dead: set[str] = set()
    while True:
        start = opener.search(text, search)
        if start is None:
            break
        closer = closer_of(start)
        end = None if closer.pattern in dead else closer.search(text, start.end())
        if end is None:
            dead.add(closer.pattern)
            search = start.end()
            continue
        out += [text[pos : start.start()], repl]
        pos = search = end.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def redact_secrets(text: str | None) -> str:
    """``text`` with likely credentials replaced (see the module docstring); ``None`` -> ``""``.

    Never raises; linear in ``len(text)``.
    """
    if not text:
        return ""
    lowered = text.lower()
    if not any(hint in lowered for hint in _HINTS):
        return text
    if "PRIVATE KEY-----" in text:
        text = sub_blocks(text, _PEM_OPEN, lambda _m: _PEM_CLOSE, PRIVATE_KEY_MARKER)
    for pattern, repl in _TOKEN_PATTERNS:
        text = pattern.sub(repl, text)
    return text
