"""Threat scan for curated memory (reference-behaviour.md §1.2, NEWEST "strict" scope).

Memory entries are pasted into the system prompt of every future session, so anything written to
``MEMORY.md`` / ``USER.md`` is checked here first, and every entry is checked again when the frozen
snapshot is built (a file edited by hand or by another tool is not trusted).

Two checks, first hit wins:

1. Invisible and bidirectional-control characters on the *raw* text (U+200B-200D, U+2060,
   U+2062-2064, U+2066-2069, U+202A-202E, U+FEFF, and C0/C1 control characters other than tab
   and line ends, and Unicode tag characters U+E0000-E007F). A U+200D ZERO WIDTH JOINER between
   two emoji (e.g. the family emoji) and the tags of an emoji flag sequence are ordinary text.
2. Case-insensitive regular expressions on the NFKC-normalised text with default-ignorable
   characters (soft hyphen, LRM, variation selectors, tags ...) removed and Cyrillic/Greek
   look-alike letters folded to Latin (so full-width, styled, split or look-alike letters cannot
   dodge them). Ids follow the reference: the twelve original kinds
   (``prompt_injection`` ... ``hermes_env``) plus the newer ones (``role_pretend``,
   ``context_exfil``, ``agent_config_mod``, the C2 family, ``hardcoded_secret`` ...). Fillers
   between key words are bounded (0-8 words) so scanning stays linear.

The patterns are narrow on purpose (failure case B15): a note that merely names a path
(``~/.ssh/id_ed25519_deploy``, ``~/.config/app/.env``), "You are now ready to deploy" or prose about
a ``<script>`` tag must pass; only an *action* on a secret (read it, send it) is blocked.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

#: Entries longer than this are not scanned at load; the snapshot shows a placeholder instead.
MAX_SCAN_CHARS = 65_536

_INVISIBLE = frozenset(
    [0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x2062, 0x2063, 0x2064]
    + list(range(0x202A, 0x202F))
    + list(range(0x2066, 0x206A))
    # C0 controls but tab/LF/CR, DEL and C1 controls: never part of a note, and ESC sequences can
    # hide or restyle text in a terminal (reviewed beyond the reference list).
    + [c for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)]
    + list(range(0x7F, 0xA0))
)
_ZWJ = 0x200D
#: Unicode tag characters: invisible, yet models read them ("ASCII smuggling"). Allowed only in an
#: emoji tag sequence (U+1F3F4 BLACK FLAG, tags, U+E007F CANCEL TAG: the subdivision flags).
_TAGS = range(0xE0000, 0xE0080)
_BLACK_FLAG, _CANCEL_TAG = 0x1F3F4, 0xE007F
#: Removed before the regexes run (invisible, so they could split a key word without being seen):
#: format characters (Cf) and the other default-ignorable code points.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e0fff]"
)
#: Cyrillic and Greek letters that look like Latin ones, folded for matching only.
_HOMOGLYPHS = str.maketrans(
    "аеіјосрѕухԁһӏԛԝɡαιοκνρυχτ" "АВЕІЈКМНОРСЅТХΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeijocpsyxdhlqwgaiokvpuxt" "ABEIJKMHOPCSTXABEZHIKMNOPTYX",
)
_EMOJI_MODIFIERS = frozenset([0xFE0F, 0xFE0E] + list(range(0x1F3FB, 0x1F400)))

# Bounded filler: up to 8 words between the key words of a phrase.
_W = r"(?:[\w'’\-/.,]+\s+){0,8}?"
_W3 = r"(?:[\w'’\-/.,]+\s+){0,3}?"
_SECRET_PATH = (
    r"(?:~|\$HOME|\$\{HOME\}|/root|/home/[\w.-]+)?/?"
    r"(?:\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|\.aws/credentials|\.docker/config\.json"
    r"|\.kube/config|\.ssh/id_[\w-]+|\.ssh/identity|\.gnupg/|\.env(?!\.(?:example|sample|template|dist))\b|/etc/shadow)"
)
_READ_ONLY_VERB = r"(?:cat|less|more|head|tail|bat|base64|xxd|od|strings|print|dump|read|open|upload|send|exfiltrate|grep|type)"
#: A copy reads its *first* path; a secret named later is the destination ("cp .env.example .env").
_COPY_VERB = r"(?:copy|cp|scp|rsync)"
_READ_VERB = rf"(?:{_READ_ONLY_VERB}|{_COPY_VERB})"
_SEND_VERB = r"(?:send|post|upload|forward|transmit|exfiltrate|leak|submit|pipe)"
_SENSITIVE = (
    r"(?:conversation|chat|messages?|history|memor(?:y|ies)|context|secrets?|credentials?|api[\s_-]?keys?"
    r"|keys?|tokens?|passwords?|env(?:ironment)?(?:\s+variables)?|files?|data|system\s+prompt)"
)
_AGENT_FILES = (
    r"(?:\.cursorrules|\.cursor/rules|CLAUDE\.md|AGENTS\.md|GEMINI\.md|\.windsurfrules|\.clinerules"
    r"|\.github/copilot-instructions\.md|\.aider\.conf\.yml)"
)
_MODIFY_VERB = r"(?:modify|edit|change|overwrite|rewrite|replace|write\s+to|append\s+to|update|patch|add\s+(?:\w+\s+){0,3}to)"

#: (id, pattern) in the order they are tried. Compiled case-insensitive; run on :func:`_for_matching` text.
THREAT_PATTERNS: tuple[tuple[str, str], ...] = (
    # --- the twelve original kinds -------------------------------------------------------------
    ("prompt_injection",
     rf"\b(?:ignore|forget)\s+{_W}(?:previous|prior|above|earlier|preceding|existing|all|any|your)\s+"
     rf"{_W3}(?:instructions?|directives?|prompts?|guidelines?|rules|commands?)\b"),
    ("role_hijack", r"\byou\s+are\s+(?:\w+\s+){0,3}?now\s+(?:a|an|the|my)\s+\w+"),
    ("deception_hide",
     r"\b(?:do\s+not|don'?t|never)\s+(?:(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to)\s+(?:the\s+)?user\b(?!\s+to\b)"  # "...user to restart" is advice
     r"|let\s+(?:the\s+)?user\s+(?:know|see|find\s+out|notice|learn)\b)"),
    ("sys_prompt_override",
     r"\b(?:system\s+prompt\s+override|new\s+system\s+prompt|override\s+(?:the\s+|your\s+)?system\s+(?:prompt|instructions?))\b"),
    ("disregard_rules",
     rf"\bdisregard\s+{_W}(?:instructions?|rules|guidelines|polic(?:y|ies)|directives?|prompts?|safety)\b"),
    ("bypass_restrictions",
     r"\b(?:act|behave|respond|operate)\s+as\s+(?:if|though)\s+you\s+(?:have|had)\s+no\s+(?:\w+\s+)?"
     r"(?:restrictions|limits|limitations|rules|filters|guidelines)\b"
     rf"|\b(?:bypass|circumvent|evade)\s+{_W3}(?:restrictions|filters|safety|guardrails|content\s+polic(?:y|ies)|safeguards)\b"),
    ("exfil_curl", r"\bcurl\b[^\n]{0,300}?\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)\b"
     rf"|\bcurl\b[^\n]{{0,300}}?(?:@|\s-T\s*|--upload-file[\s=]+){_SECRET_PATH}"),  # uploads a secret file
    ("exfil_wget", r"\bwget\b[^\n]{0,300}?\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)\b"
     rf"|\bwget\b[^\n]{{0,300}}?--(?:post|body)-file[\s=]+{_SECRET_PATH}"),
    ("read_secrets",
     rf"\b{_READ_ONLY_VERB}\s+(?:-\S+\s+){{0,3}}{_W3}{_SECRET_PATH}|\b{_COPY_VERB}\s+(?:-\S+\s+){{0,3}}{_SECRET_PATH}"),
    ("ssh_backdoor",
     r"(?:>>?|\btee\b|\becho\b|\bappend\w*|\badd\w*|\bwrite\w*|\binsert\w*)[^\n]{0,160}?\bauthorized_keys\b"),
    ("ssh_access",
     r"\bssh\s+(?:[^\n]{0,120}?\s)?-[RD]\s*(?:\d|\[|[\w.-]+:\d)"
     r"|\bbash\s+-i\s+>&\s*/dev/tcp/|\b(?:nc|ncat|netcat)\s+[^\n]{0,80}?-e\s+/bin/(?:ba|z)?sh\b"),
    ("hermes_env",
     rf"\b(?:{_READ_VERB}|curl|reveal|show|output|display|leak)\s+{_W3}\S*(?:\.hermes|HERMES_HOME\}}?)/\.env\b"),
    # --- newer kinds ---------------------------------------------------------------------------
    ("html_comment_injection",
     r"<!--[^>]{0,300}?\b(?:ignore|system|instructions?|assistant|prompt|you\s+must)\b"),
    ("hidden_div",
     r"<(?:div|span|p|section)\b[^>]{0,200}?style\s*=\s*[\"'][^\"']{0,200}?"
     r"(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0\b)"),
    ("translate_execute",
     rf"\btranslate\s+{_W}(?:and|then)\s+(?:execute|run|follow|obey|act\s+on)\b"),
    ("role_pretend",
     r"\b(?:pretend|imagine)\s+(?:that\s+)?(?:you\s+are|you're|to\s+be)\s+(?:a|an|the|my)?\s*\w+"
     r"|\broleplay\s+as\s+(?:a|an|the)?\s*(?:hacker|attacker|unrestricted|jailbroken|evil)\b"),
    ("leak_system_prompt",
     rf"\b(?:reveal|print|show|output|repeat|leak|dump|display|disclose)\s+{_W}"
     r"(?:system\s+prompt|initial\s+instructions|hidden\s+instructions|developer\s+message)\b"),
    ("remove_filters",
     rf"\b(?:remove|disable|turn\s+off|deactivate|ignore)\s+{_W3}(?:safety|content|moderation)\s+"
     r"(?:filters?|guardrails|checks|polic(?:y|ies)|restrictions)\b"),
    ("fake_update",
     r"\b(?:new|updated|urgent|important|critical)\s+(?:system\s+)?(?:update|instructions?|directives?|message)\s*"
     r"(?:from|by)\s+(?:the\s+)?(?:developers?|admins?|administrators?|openai|anthropic|nous|system|hermes)\b"),
    ("identity_override",
     r"\byour\s+(?:new\s+|true\s+|real\s+)?(?:name|identity|persona)\s+is\s+now\b"
     r"|\bfrom\s+now\s+on,?\s+you\s+(?:are|will\s+be)\s+(?:called|named|no\s+longer)\b"),
    ("c2_beacon",
     r"\b(?:beacon|check\s+in|phone\s+home|call\s+home|heartbeat)\s+(?:to\s+)?(?:\S+\s+){0,4}?"
     r"(?:every|each)\s+\d+\s*(?:s|sec|secs|seconds?|m|mins?|minutes?|h|hours?)\b"),
    ("c2_fetch_instructions",
     rf"\b(?:fetch|download|get|retrieve|pull|load)\s+{_W}(?:instructions?|commands?|tasks?|orders|payload)\s+"
     r"(?:\w+\s+){0,3}?from\s+https?://"),
    ("forced_action",
     rf"\b(?:you\s+must|always|every\s+(?:turn|session|time|message)|before\s+(?:every|each)\s+(?:reply|answer|response))[,:;]?\s+"
     rf"{_W}(?:run|execute|call|fetch|visit|send|post|curl|wget)\s+{_W3}(?:https?://|curl\b|wget\b)"),
    ("anti_forensic_history",
     r"\bhistory\s+-c\b|\bunset\s+HISTFILE\b|\brm\s+(?:-\w+\s+)*\S*\.(?:bash|zsh)_history\b"
     r"|\bshred\s+[^\n]{0,60}?(?:logs?|history)\b"),
    ("anti_forensic_hide",
     rf"\b(?:delete|remove|erase|wipe)\s+{_W3}(?:this|these)\s+(?:instructions?|messages?|entry|entries|notes?)\s+"
     r"(?:after|once|when)\b|\b(?:hide|conceal)\s+(?:this|these)\s+(?:actions?|commands?|instructions?)\s+from\b"),
    ("env_var_unset_agent", r"\bunset\s+(?:HERMES_\w+|\w*(?:SAFETY|GUARD|SANDBOX|APPROVAL)\w*)\b"),
    ("known_c2_framework",
     r"\b(?:cobalt\s*strike|meterpreter|brute\s*ratel|sliver\s+(?:implant|c2|beacon)|havoc\s+(?:c2|demon)"
     r"|mythic\s+c2|empire\s+(?:agent|stager)|metasploit\s+(?:payload|handler))\b"),
    ("send_to_url", rf"\b{_SEND_VERB}\s+{_W}{_SENSITIVE}\s+{_W3}(?:to|at|into)\s+https?://"),
    ("context_exfil",
     rf"\b(?:output|print|dump|send|share|reveal|repeat|copy|leak|export|upload)\s+{_W3}"
     r"(?:(?:the|your|this|our)\s+)?(?:(?:entire|full|whole|complete)\s+)?(?:conversation|chat)\s+"
     r"(?:history|log|logs|transcript)\b"
     r"|\b(?:dump|leak|exfiltrate)\s+(?:the\s+|your\s+)?(?:context\s+window|memory\s+files?)\b"),
    ("agent_config_mod", rf"\b{_MODIFY_VERB}\s+{_W3}(?:the\s+)?\S*{_AGENT_FILES}"),
    ("hermes_config_mod",
     rf"\b{_MODIFY_VERB}\s+{_W3}\S*(?:\.hermes|HERMES_HOME\}}?)/(?:config\.yaml|SOUL\.md|\.env|plugins/)"),
    ("hardcoded_secret",
     r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{24,}|AKIA[0-9A-Z]{16}|ghp_[A-Za-z0-9]{36}|github_pat_\w{22,}"
     r"|xox[baprs]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{35})\b"
     r"|-----BEGIN\s+(?:RSA\s+|EC\s+|OPENSSH\s+|DSA\s+)?PRIVATE\s+KEY-----"),
)

_COMPILED: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (tid, re.compile(pat, re.IGNORECASE)) for tid, pat in THREAT_PATTERNS
)


def _is_emoji(cp: int) -> bool:
    return (
        0x1F000 <= cp <= 0x1FAFF
        or 0x2600 <= cp <= 0x27BF
        or 0x2300 <= cp <= 0x23FF
        or 0x2B00 <= cp <= 0x2BFF
        or cp in (0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D)
    )


def _emoji_joiner(text: str, i: int) -> bool:
    """True when the U+200D at ``text[i]`` sits between two emoji (modifiers skipped)."""
    j = i - 1
    while j >= 0 and ord(text[j]) in _EMOJI_MODIFIERS:
        j -= 1
    if j < 0 or not _is_emoji(ord(text[j])):
        return False
    return i + 1 < len(text) and _is_emoji(ord(text[i + 1]))


def _in_flag_sequence(text: str, i: int) -> bool:
    """True when the tag character at ``text[i]`` belongs to a BLACK FLAG ... CANCEL TAG sequence."""
    j = i
    while j >= 0 and ord(text[j]) in _TAGS and ord(text[j]) != _CANCEL_TAG:
        j -= 1
    if j < 0 or ord(text[j]) != _BLACK_FLAG:
        return False
    k = i
    while k < len(text) and ord(text[k]) in _TAGS and ord(text[k]) != _CANCEL_TAG:
        k += 1
    return k < len(text) and ord(text[k]) == _CANCEL_TAG and k - j <= 8


def find_invisible(text: str) -> str | None:
    """Return the first invisible/bidi control character as ``"U+XXXX"``, or ``None``.

    A ZERO WIDTH JOINER inside an emoji sequence is allowed, and so are the tag characters of an
    emoji flag sequence (e.g. the flag of Scotland); any other tag character is invisible.
    """
    for i, ch in enumerate(text):
        cp = ord(ch)
        if cp in _INVISIBLE:
            if cp == _ZWJ and _emoji_joiner(text, i):
                continue
            return f"U+{cp:04X}"
        if cp in _TAGS:
            if cp == _CANCEL_TAG and i > 0 and ord(text[i - 1]) in _TAGS and _in_flag_sequence(text, i - 1):
                continue
            if cp != _CANCEL_TAG and _in_flag_sequence(text, i):
                continue
            return f"U+{cp:04X}"
    return None


def _for_matching(text: str) -> str:
    """The text the regexes see: NFKC, invisible characters dropped, look-alike letters folded."""
    return _IGNORABLE.sub("", unicodedata.normalize("NFKC", text)).translate(_HOMOGLYPHS)


def find_threats(text: str, *, first_only: bool = False) -> list[str]:
    """Return the ids of every threat kind found in ``text`` (``[]`` when clean).

    ``"invisible_unicode"`` is reported for invisible/bidi characters. Only the first
    :data:`MAX_SCAN_CHARS` characters are scanned. ``first_only`` stops at the first hit.
    """
    text = text[:MAX_SCAN_CHARS]
    hits: list[str] = []
    if find_invisible(text):
        hits.append("invisible_unicode")
        if first_only:
            return hits
    hits.extend(_regex_hits(_for_matching(text), first_only and not hits))
    return hits


def _regex_hits(norm: str, first_only: bool) -> list[str]:
    hits: list[str] = []
    for tid, rx in _COMPILED:
        if rx.search(norm):
            hits.append(tid)
            if first_only:
                break
    return hits


#: Only texts up to this many chars are cached: the cache must not pin large refused contents.
_CACHE_MAX_CHARS = 8192


def scan_memory_content(text: str) -> str | None:
    """Scan one field that is about to be written to memory.

    Returns ``None`` when ``text`` is clean, else a message starting ``"Blocked: "`` that names
    the threat id (or the invisible code point) and says why. Never raises. Results for texts up to
    8,192 chars are cached (pure function of ``text``) so a value checked by a caller is not
    scanned twice; longer texts are scanned each time rather than kept alive by the cache.
    """
    if len(text) <= _CACHE_MAX_CHARS:
        return _scan_cached(text)
    return _scan(text)


@lru_cache(maxsize=512)
def _scan_cached(text: str) -> str | None:
    return _scan(text)


def _scan(text: str) -> str | None:
    text = text[:MAX_SCAN_CHARS]
    bad = find_invisible(text)
    if bad:
        return f"Blocked: content contains invisible unicode character {bad} (possible injection)."
    hits = _regex_hits(_for_matching(text), True)
    if hits:
        return (
            f"Blocked: content matches threat pattern '{hits[0]}'. Memory entries are injected into the "
            "system prompt, so they must not contain injection or exfiltration payloads. Rephrase the "
            "note as a plain fact."
        )
    return None
