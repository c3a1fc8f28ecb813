"""Surgical edits of a JSON document's text: add or remove one member, every other byte kept.

A client's ``settings.json`` belongs to the user (and to the client, which rewrites it too). Parsing
it and dumping it again would reflow the whole file: key order, indentation, spacing, escapes. This
module parses the text into a tree of spans instead (:func:`parse`), so that an edit replaces only
the characters of the member it adds or removes. :func:`append_member` and :func:`remove_child` are
exact inverses: removing what was appended gives back the original text byte for byte.

Standard JSON (RFC 8259) is read, and with ``comments=True`` also JSON with comments as Gemini CLI
reads its settings (``//`` to the end of the line and ``/* ... */`` anywhere whitespace may stand;
it strips them with ``strip-json-comments`` and hands the rest to ``JSON.parse``, so a trailing
comma is still an error there and here). Edits never move, change or drop a comment: a member is
added after the comments that end the line it follows, and removed without the comments around it.
A trailing comma, or a comment where ``comments=False``, raises :class:`ValueError`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_WS = " \t\r\n"
_NL = "\n"
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")


@dataclass
class Node:
    """One JSON value: ``kind`` (``object``/``array``/``string``/``number``/``literal``), its text
    span ``[start, end)``, and for containers its children: ``(key or None, key_start, Node)``."""

    kind: str
    start: int
    end: int
    children: list[tuple[str | None, int, Node]] = field(default_factory=list)

    def get(self, key: str) -> Node | None:
        """The value of member ``key`` of an object (the last one if repeated), else ``None``."""
        found = None
        for k, _, v in self.children:
            if k == key:
                found = v
        return found


def comment_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of every comment in ``text`` outside strings, in order (a ``//`` comment
    ends before its line break). Raises ``ValueError`` for a ``/*`` that is never closed."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while True:
        j = min((k for k in (text.find('"', i), text.find("/", i)) if k >= 0), default=-1)
        if j < 0:
            return spans
        if text[j] == '"':
            try:
                i = _DECODER.raw_decode(text, j)[1]  # text[j] is the opening quote
            except json.JSONDecodeError:  # parse() reports the bad string with its position
                return spans
        elif text.startswith("//", j):
            end = n
            for brk in ("\n", "\r"):
                k = text.find(brk, j)
                if 0 <= k < end:
                    end = k
            spans.append((j, end))
            i = end
        elif text.startswith("/*", j):
            k = text.find("*/", j + 2)
            if k < 0:
                raise ValueError(f"a /* comment is never closed ({_where(text, j)})")
            spans.append((j, k + 2))
            i = k + 2
        else:
            i = j + 1


def strip_comments(text: str) -> str:
    """``text`` with every comment replaced by spaces (line breaks kept), so offsets stay valid."""
    out = []
    last = 0
    for start, end in comment_spans(text):
        out.append(text[last:start])
        out.append(re.sub(r"[^\r\n]", " ", text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)


def _where(text: str, i: int) -> str:
    line = text.count("\n", 0, i) + 1
    return f"line {line}, column {i - text.rfind(_NL, 0, i)}"


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


_DECODER = json.JSONDecoder()  # strict: control characters in a string are refused, as by json.loads


def _string_end(text: str, i: int) -> tuple[str, int]:
    try:
        value, end = _DECODER.raw_decode(text, i)  # text[i] is the opening quote
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid string at {_where(text, i)}: {exc.msg}") from exc
    return str(value), end


def _value(text: str, i: int) -> Node:
    i = _skip(text, i)
    if i >= len(text):
        raise ValueError("unexpected end of document")
    c = text[i]
    if c == "{":
        node = Node("object", i, -1)
        j = _skip(text, i + 1)
        if j < len(text) and text[j] == "}":
            node.end = j + 1
            return node
        while True:
            j = _skip(text, j)
            if j < len(text) and text[j] == "}":
                raise ValueError(f"trailing comma at {_where(text, text.rindex(',', 0, j))}")
            if j >= len(text) or text[j] != '"':
                raise ValueError(f"expected a member name at {_where(text, j)}")
            key, after = _string_end(text, j)
            k = _skip(text, after)
            if k >= len(text) or text[k] != ":":
                raise ValueError(f"expected ':' at {_where(text, k)}")
            child = _value(text, k + 1)
            node.children.append((key, j, child))
            j = _skip(text, child.end)
            if j < len(text) and text[j] == ",":
                j += 1
                continue
            if j < len(text) and text[j] == "}":
                node.end = j + 1
                return node
            raise ValueError(f"expected ',' or '}}' at {_where(text, j)}")
    if c == "[":
        node = Node("array", i, -1)
        j = _skip(text, i + 1)
        if j < len(text) and text[j] == "]":
            node.end = j + 1
            return node
        while True:
            if node.children and _skip(text, j) < len(text) and text[_skip(text, j)] == "]":
                raise ValueError(f"trailing comma at {_where(text, text.rindex(',', 0, j))}")
            child = _value(text, j)
            node.children.append((None, child.start, child))
            j = _skip(text, child.end)
            if j < len(text) and text[j] == ",":
                j += 1
                continue
            if j < len(text) and text[j] == "]":
                node.end = j + 1
                return node
            raise ValueError(f"expected ',' or ']' at {_where(text, j)}")
    if c == '"':
        _, end = _string_end(text, i)
        return Node("string", i, end)
    for lit in ("true", "false", "null"):
        if text.startswith(lit, i):
            return Node("literal", i, i + len(lit))
    m = _NUMBER.match(text, i)
    if m and m.end() > i:
        return Node("number", i, m.end())
    raise ValueError(f"unexpected character {c!r} at {_where(text, i)}")


def parse(text: str, *, comments: bool = False) -> Node:
    """The span tree of ``text`` (one JSON document, surrounding whitespace allowed; with
    ``comments``, comments too). Spans index ``text`` itself.

    Raises ``ValueError`` (with line and column) when ``text`` is not exactly one JSON value, holds
    a comment while ``comments`` is false, or is nested deeper than the interpreter's recursion limit.
    """
    plain = strip_comments(text)
    if plain != text and not comments:
        first = next(i for i, (a, b) in enumerate(zip(text, plain, strict=True)) if a != b)
        raise ValueError(f"a comment at {_where(text, first)}")
    try:
        root = _value(plain, 0)
    except RecursionError:
        raise ValueError("the document is nested too deeply to edit") from None
    if _skip(plain, root.end) != len(plain):
        raise ValueError(f"extra data after the JSON document at {_where(text, root.end)}")
    return root


def loads(text: str) -> Any:
    """The value of a JSON document that may hold comments (``ValueError`` when it is not one)."""
    try:
        return json.loads(strip_comments(text))
    except RecursionError:
        raise ValueError("the document is nested too deeply to read") from None


@dataclass(frozen=True)
class Style:
    """How the file is laid out: ``pretty`` (members on their own lines), indent unit, newline."""

    pretty: bool
    indent: str
    newline: str


def detect_style(text: str) -> Style:
    """Indentation and newline of ``text``: the first indented line gives the unit (default two
    spaces); a document written on one line is compact; an empty object is treated as pretty."""
    newline = "\r\n" if "\r\n" in text else "\n"
    body = text.strip()
    m = re.search(r"\n([ \t]+)\S", text)
    if m:
        return Style(True, m.group(1), newline)
    pretty = "\n" in body or re.fullmatch(r"\{\s*\}", body) is not None or not body
    return Style(pretty, "  ", newline)


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    m = re.match(r"[ \t]*", text[start:pos])
    return m.group(0) if m else ""


def _render(value: Any, style: Style, indent: str) -> str:
    if not style.pretty:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = json.dumps(value, ensure_ascii=False, indent=len(style.indent.expandtabs(4)) or 2)
    if "\t" in style.indent:
        text = re.sub(r"(?m)^( {4})+", lambda m: "\t" * (len(m.group(0)) // 4), text)
    return text.replace("\n", style.newline + indent)


def _comments_in(spans: list[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    return [(s, e) for s, e in spans if s >= lo and e <= hi]


def _comma_after(text: str, i: int) -> int:
    """Position of the ``,`` that follows the value ending at ``i`` (past whitespace and comments)."""
    j = _skip(strip_comments(text), i)
    if j >= len(text) or text[j] != ",":
        raise ValueError(f"expected ',' at {_where(text, j)}")
    return j


def _line_end(text: str, spans: list[tuple[int, int]], at: int, hi: int) -> tuple[int, bool]:
    """Past the comments that follow ``at`` on its own line (spaces between them allowed):
    ``(end of the last one, or at; whether a // comment was among them)``."""
    end, line_comment = at, False
    for s, e in _comments_in(spans, at, hi):
        if text[end:s].strip(" \t"):
            break
        end, line_comment = e, text.startswith("//", s)
        if line_comment:
            break
    return end, line_comment


def append_member(text: str, container: Node, key: str | None, value: Any, style: Style) -> str:
    """``text`` with ``value`` appended as the last member of ``container`` (an object needs ``key``).

    In a non-empty container the new member follows the last one after ``","`` and the same
    whitespace that separates the existing members (or, with one member, that precedes it); the
    comma goes right after the last value and the new member after any comments that end that
    value's line, so every comment stays where it was. An empty container gets the new member on
    its own line (pretty style) or inline (compact), after any comments it holds.
    (:func:`inner_text` tells what an empty container held, so :func:`remove_child` can restore it.)
    """
    spans = comment_spans(text)
    kv_sep = ": " if style.pretty else ":"
    if container.children:
        last = container.children[-1]
        last_start = last[1]
        if len(container.children) > 1:
            lo = _comma_after(text, container.children[-2][2].end) + 1
        else:
            lo = container.start + 1
        before = _comments_in(spans, lo, last_start)
        sep = text[before[-1][1] if before else lo : last_start]
        if not sep and style.pretty and len(container.children) == 1:  # `[{...}]` in a pretty file
            sep = " "
        at = last[2].end
        eol, line_comment = _line_end(text, spans, at, container.end - 1)
        if line_comment and "\n" not in sep:  # nothing may follow a // comment on its line
            sep = style.newline + _line_indent(text, last_start)
        if "\n" in sep:
            rendered = _render(value, style, _line_indent(text, last_start))
        else:  # members on one line (even in a pretty file): the new one stays on that line too
            rendered = _render(value, Style(False, style.indent, style.newline), "")
            if style.pretty:
                rendered = json.dumps(value, ensure_ascii=False)
        member = rendered if key is None else json.dumps(key, ensure_ascii=False) + kv_sep + rendered
        return text[:at] + "," + text[at:eol] + sep + member + text[eol:]
    outer = _line_indent(text, container.start)
    inside = _comments_in(spans, container.start + 1, container.end - 1)
    if style.pretty:
        indent = outer + style.indent
        rendered = _render(value, style, indent)
        member = rendered if key is None else json.dumps(key, ensure_ascii=False) + kv_sep + rendered
        inner = style.newline + indent + member + style.newline + outer
    else:
        rendered = _render(value, style, "")
        inner = rendered if key is None else json.dumps(key, ensure_ascii=False) + kv_sep + rendered
    if inside:  # keep what the container holds; the member goes on a line after its last comment
        at = inside[-1][1]
        if not style.pretty:
            inner = (style.newline + inner) if text.startswith("//", inside[-1][0]) else " " + inner
        else:
            inner = style.newline + indent + member
        return text[:at] + inner + text[at:]
    return text[: container.start + 1] + inner + text[container.end - 1 :]


def has_comments(text: str, container: Node) -> bool:
    """Whether a comment stands anywhere between the brackets of ``container``."""
    return bool(_comments_in(comment_spans(text), container.start + 1, container.end - 1))


def inner_text(text: str, container: Node) -> str:
    """What lies between the brackets of ``container`` (for an empty one: its whitespace)."""
    return text[container.start + 1 : container.end - 1]


def remove_child(text: str, container: Node, index: int, empty_inner: str | None = None) -> str:
    """``text`` without child ``index`` of ``container`` (and the comma and whitespace that joined it).

    Comments are never removed: those around the child stay where they are. Removing the only
    child leaves the container holding ``empty_inner`` (what it held before the child was added)
    when that holds the same comments the container holds now; otherwise its comments, or nothing.
    """
    spans = comment_spans(text)
    children = container.children
    _, start, node = children[index]
    if len(children) == 1:
        inside = [text[s:e] for s, e in _comments_in(spans, container.start + 1, container.end - 1)]
        if empty_inner is not None and inside == [empty_inner[s:e] for s, e in comment_spans(empty_inner)]:
            return text[: container.start + 1] + empty_inner + text[container.end - 1 :]
        if not inside:
            return text[: container.start + 1] + text[container.end - 1 :]
        before = _comments_in(spans, container.start + 1, start)
        return text[: before[-1][1] if before else container.start + 1] + text[node.end :]
    if index == len(children) - 1:
        comma = _comma_after(text, children[index - 1][2].end)
        before = _comments_in(spans, comma + 1, start)
        cut = before[-1][1] if before else comma + 1
        return text[:comma] + text[comma + 1 : cut] + text[node.end :]
    comma = _comma_after(text, node.end)
    kept = text[node.end : comma] if _comments_in(spans, node.end, comma) else ""
    after = comma + 1
    while after < len(text) and text[after] in _WS:
        after += 1
    return text[:start] + kept + text[after:]
