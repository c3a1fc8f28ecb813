"""Surgical edits of a JSON document's text: add or remove one member, every other byte kept.

A client's ``settings.json`` belongs to the user (and to the client, which rewrites it too). Parsing
it and dumping it again would reflow the whole file: key order, indentation, spacing, escapes. This
module parses the text into a tree of spans instead (:func:`parse`), so that an edit replaces only
the characters of the member it adds or removes. :func:`append_member` and :func:`remove_child` are
exact inverses: removing what was appended gives back the original text byte for byte.

Only standard JSON (RFC 8259) is read; comments or trailing commas raise :class:`ValueError`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_WS = " \t\r\n"
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


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


_DECODER = json.JSONDecoder()  # strict: control characters in a string are refused, as by json.loads


def _string_end(text: str, i: int) -> tuple[str, int]:
    try:
        value, end = _DECODER.raw_decode(text, i)  # text[i] is the opening quote
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid string at character {i}: {exc.msg}") from exc
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
            if j >= len(text) or text[j] != '"':
                raise ValueError(f"expected a member name at character {j}")
            key, after = _string_end(text, j)
            k = _skip(text, after)
            if k >= len(text) or text[k] != ":":
                raise ValueError(f"expected ':' at character {k}")
            child = _value(text, k + 1)
            node.children.append((key, j, child))
            j = _skip(text, child.end)
            if j < len(text) and text[j] == ",":
                j += 1
                continue
            if j < len(text) and text[j] == "}":
                node.end = j + 1
                return node
            raise ValueError(f"expected ',' or '}}' at character {j}")
    if c == "[":
        node = Node("array", i, -1)
        j = _skip(text, i + 1)
        if j < len(text) and text[j] == "]":
            node.end = j + 1
            return node
        while True:
            child = _value(text, j)
            node.children.append((None, child.start, child))
            j = _skip(text, child.end)
            if j < len(text) and text[j] == ",":
                j += 1
                continue
            if j < len(text) and text[j] == "]":
                node.end = j + 1
                return node
            raise ValueError(f"expected ',' or ']' at character {j}")
    if c == '"':
        _, end = _string_end(text, i)
        return Node("string", i, end)
    for lit in ("true", "false", "null"):
        if text.startswith(lit, i):
            return Node("literal", i, i + len(lit))
    m = _NUMBER.match(text, i)
    if m and m.end() > i:
        return Node("number", i, m.end())
    raise ValueError(f"unexpected character {c!r} at character {i}")


def parse(text: str) -> Node:
    """The span tree of ``text`` (one JSON document, surrounding whitespace allowed).

    Raises ``ValueError`` (with the character offset) when ``text`` is not exactly one JSON value,
    or is nested deeper than the interpreter's recursion limit.
    """
    try:
        root = _value(text, 0)
    except RecursionError:
        raise ValueError("the document is nested too deeply to edit") from None
    if _skip(text, root.end) != len(text):
        raise ValueError(f"extra data after the JSON document at character {root.end}")
    return root


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


def append_member(text: str, container: Node, key: str | None, value: Any, style: Style) -> str:
    """``text`` with ``value`` appended as the last member of ``container`` (an object needs ``key``).

    In a non-empty container the new member follows the last one after ``","`` and the same
    whitespace that separates the existing members (or, with one member, that precedes it).
    An empty container gets the new member on its own line (pretty style) or inline (compact).
    (:func:`inner_text` tells what an empty container held, so :func:`remove_child` can restore it.)
    """
    kv_sep = ": " if style.pretty else ":"
    if container.children:
        last = container.children[-1]
        last_start = last[1]
        if len(container.children) > 1:
            prev = container.children[-2][2]
            comma = text.index(",", prev.end)
            sep = text[comma + 1 : last_start]
        else:
            sep = text[container.start + 1 : last_start]
            if not sep and style.pretty:  # `[{...}]` in a pretty file: `[{...}, {...}]`
                sep = " "
        if "\n" in sep:
            rendered = _render(value, style, _line_indent(text, last_start))
        else:  # members on one line (even in a pretty file): the new one stays on that line too
            rendered = _render(value, Style(False, style.indent, style.newline), "")
            if style.pretty:
                rendered = json.dumps(value, ensure_ascii=False)
        member = rendered if key is None else json.dumps(key, ensure_ascii=False) + kv_sep + rendered
        at = last[2].end
        return text[:at] + "," + sep + member + text[at:]
    outer = _line_indent(text, container.start)
    if style.pretty:
        indent = outer + style.indent
        rendered = _render(value, style, indent)
        member = rendered if key is None else json.dumps(key, ensure_ascii=False) + kv_sep + rendered
        inner = style.newline + indent + member + style.newline + outer
    else:
        rendered = _render(value, style, "")
        inner = rendered if key is None else json.dumps(key, ensure_ascii=False) + kv_sep + rendered
    return text[: container.start + 1] + inner + text[container.end - 1 :]


def inner_text(text: str, container: Node) -> str:
    """What lies between the brackets of ``container`` (for an empty one: its whitespace)."""
    return text[container.start + 1 : container.end - 1]


def remove_child(text: str, container: Node, index: int, empty_inner: str = "") -> str:
    """``text`` without child ``index`` of ``container`` (and the comma and whitespace that joined it).

    Removing the only child leaves the container holding ``empty_inner`` (default: nothing).
    """
    children = container.children
    _, start, node = children[index]
    if len(children) == 1:
        return text[: container.start + 1] + empty_inner + text[container.end - 1 :]
    if index == len(children) - 1:
        return text[: children[index - 1][2].end] + text[node.end :]
    return text[:start] + text[children[index + 1][1] :]
