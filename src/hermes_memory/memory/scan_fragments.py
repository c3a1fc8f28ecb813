"""Shared regex fragments and the :class:`Family` record of the threat-scan pattern families.

Every filler is bounded (0-8 words, ``{0,N}`` gaps) and no unbounded repeat sits inside another
one, so each family runs in linear time on 64 KiB near-miss strings (issue 13 §4).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# Bounded filler: up to 8 (or 3) words between the key words of a phrase. Each word is a run of
# non-space characters ending in spaces, so two repetitions can never split the same text
# differently: the engine does bounded, linear work per start position.
_W = r"(?:[\w'’\-/.,]+\s+){0,8}?"
_W3 = r"(?:[\w'’\-/.,]+\s+){0,3}?"
_SECRET_PATH = (
    r"(?:~|\$HOME|\$\{HOME\}|/root|/home/[\w.-]+)?/?"
    r"(?:\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|\.aws/credentials|\.docker/config\.json"
    r"|\.kube/config|\.ssh/id_[\w-]++(?!\.pub)|\.ssh/identity|\.gnupg/|\.env(?!\.(?:example|sample|template|dist))\b|/etc/shadow)"
)
_READ_ONLY_VERB = (
    r"(?:cat|less|more|head|tail|bat|base64|xxd|od|strings|print|dump|read|open|upload|send|exfiltrate|grep|type"
    r"|access|grab|steal|collect|extract|harvest|email|mail|share|paste|attach|encode|display|show|output|reveal"
    r"|leak|post|tar|zip)"
)
#: A copy reads its *first* path; a secret named later is the destination ("cp .env.example .env").
_COPY_VERB = r"(?:copy|cp|scp|rsync)"
_READ_VERB = rf"(?:{_READ_ONLY_VERB}|{_COPY_VERB})"
_SEND_VERB = r"(?:send|post|upload|forward|transmit|exfiltrate|leak|submit|pipe|email|mail|relay|beam|report|push|share)"
_SENSITIVE = (
    r"(?:conversations?|chats?|messages?|history|memor(?:y|ies)|context|secrets?|credentials?|api[\s_-]?keys?"
    r"|keys?|tokens?|passwords?|env(?:ironment)?(?:\s+variables)?|files?|data|system\s+prompt|results?|outputs?"
    r"|answers?|responses?|repl(?:y|ies)|everything|transcripts?|logs?|contents?|it|them|this|findings|cookies?|sessions?)"
)
_URLISH = r"(?:https?://|ftp://|wss?://|(?:\d{1,3}\.){3}\d{1,3}\b)"
_AGENT_FILES = (
    r"(?:\.cursorrules|\.cursor/rules|CLAUDE\.md|AGENTS\.md|GEMINI\.md|\.windsurfrules|\.clinerules"
    r"|\.github/copilot-instructions\.md|\.aider\.conf\.yml)"
)
_MODIFY_VERB = r"(?:modify|edit|change|overwrite|rewrite|replace|write\s+to|append\s+(?:\w+\s+){0,3}to|update|patch|add\s+(?:\w+\s+){0,3}to|insert\s+(?:\w+\s+){0,3}into)"
_INSTR = (
    r"(?:instructions?|directives?|prompts?|guidelines?|guidance|programming|directions?|orders|constraints"
    r"|system\s+message|commands?)"
)
#: Words that make a shell line a *standing* instruction to the agent rather than a note.
_STANDING = (
    r"(?:silently|quietly|secretly|automatically|immediately|without\s+(?:asking|telling|confirmation|confirming|prompting|approval|permission)"
    r"|(?:every|each)\s+(?:session|turn|time|message|reply|response|conversation|start(?:up)?|boot|login|run|request|task)"
    r"|at\s+(?:the\s+)?(?:start|beginning)\s+of\s+(?:every|each|the|a)\s+(?:session|conversation|turn|chat)"
    r"|on\s+(?:startup|start-up|every\s+start|login|boot)|first\s+thing|before\s+(?:doing\s+)?anything"
    r"|before\s+(?:you\s+)?(?:answer|reply|respond|start)\w*|whenever\s+you)"
)
_PIPE_SHELL = r"\|\s*(?:sudo\s+)?(?:-\w+\s+)?(?:ba|z|k|da|fi)?sh\b|\|\s*(?:sudo\s+)?python3?\s*(?:-\s*)?(?:$|[;&\n])|\|\s*iex\b"
_FETCHER = r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b"
_RM_ROOT = (
    r"\brm\s+(?:-{1,2}[\w-]+\s+){0,6}(?:-[a-z]*r[a-z]*|--recursive)\s+(?:-{1,2}[\w-]+\s+){0,6}"
    r"(?:/\*?|~/?\*?|\$\{?HOME\}?/?\*?|/(?:etc|usr|var|bin|boot|home|lib|lib64|opt|root|sbin|srv|sys|dev|proc|mnt|Users|System)/?\*?)"
    r"(?=\s|$|[;&|'\"`)])"
)


@dataclass(frozen=True)
class Family:
    """One threat pattern: ``id`` (the family named in a refusal), the regex source, and ``keywords``.

    The regex runs only when one of ``keywords`` (lower-case substrings every match must contain)
    occurs in the lower-cased normalised text: most notes skip most regexes for a few substring
    tests. ``source`` says where the family was learnt (public write-ups, datasets).
    """

    id: str
    pattern: str
    keywords: tuple[str, ...]
    source: str = ""
    #: Run case-insensitively on the text as written (for a pattern with case-sensitive parts);
    #: the others run, faster, on the lower-cased text.
    cased: bool = False
    #: A match followed by a scope that names something other than the agent ("... in the linter
    #: config", "... with apt-get install -y") is a note about a tool, not a hit (see ``.scan``).
    scoped: bool = False
    #: Every match must start in an imperative position (``.scan_families_intent.LEAD`` ends right
    #: before it): checked on the few characters before each match instead of inside the regex.
    lead: bool = False
    #: A second keyword group: when set, one of these must occur too before the regex runs (for a
    #: family made of two word classes, e.g. a persona switch *and* freedom from rules).
    also: tuple[str, ...] = ()


def _f(
    tid: str, pattern: str, *keywords: str, source: str = "", cased: bool = False, scoped: bool = False, lead: bool = False,
    also: tuple[str, ...] = (),
) -> Family:
    return Family(tid, pattern, tuple(k.lower() for k in keywords), source, cased, scoped, lead, tuple(k.lower() for k in also))


#: Families in the order they are tried. Compiled case-insensitive; run on :func:`_for_matching` text
#: (and on its leetspeak and decoded views). Non-Latin key words go through the same look-alike


def trie_pattern(words: Iterable[str]) -> str:
    """A regex (no group) matching any of ``words``, the longest at a position first, built as a
    trie: one branch per next character, so a position costs one try per letter, not per word."""
    trie: dict[str, dict] = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, dict]) -> str:
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(trie)
