"""The text our ``hm_*`` index holds for a JSON value: its escapes decoded, as SQL (layout 4).

The reference agent writes tool calls with ``json.dumps(tool_calls)`` (``ensure_ascii=True``), so
``café`` is stored as the six characters ``caf\\u00e9``, an emoji as a ``\\ud83d\\ude00`` surrogate
pair, and ``日本語`` as three escapes; arguments it re-serialises itself (``json.dumps(args)``) are
escaped twice. Its multi-part message content (``"\\x00json:" + json.dumps(content)``) is escaped
the same way. Indexed as stored, none of those words can be found: the tokenizer sees
``caf``, ``u00e9``. Measured on a home the reference 0.19.0 wrote (tests/compat/test_escaped_json.py):
``sessions search café`` missed the agent's own memory-tool call while its ASCII words were found.

:func:`decoded` builds the SQL expression our triggers and builds index instead of such a value:

* a value holding no backslash, longer than :data:`DECODE_MAX_BYTES`, or that is not valid JSON
  (after the ``"\\x00json:"`` / ``"\\x1ejson:"`` content prefix of either program, which is kept out)
  is indexed exactly as stored (as in layout 3);
* otherwise its JSON is read by SQLite's ``json_tree`` and indexed as its object keys and leaf
  values in document order, separated by spaces: escapes (``\\uXXXX`` with surrogate pairs,
  ``\\n``, ``\\"``, ``\\\\``, ...) decoded. A string leaf that is itself a JSON object or array
  holding a backslash (tool-call ``arguments`` escaped twice) is read the same way once more.

Plain SQL with SQLite's built-in JSON functions (SQLite >= 3.38 always has them; the 3.34-3.37
builds Python ships enable them too) and no function of ours: the expression runs in our triggers,
i.e. in the reference agent's own write transactions. It never raises: ``json_tree`` only ever
reads text ``json_valid`` accepted (JSON nested deeper than SQLite's limit is not valid for it and
is indexed as stored). The reference's own tables and rows are never touched: only what we index
changes.
"""

from __future__ import annotations

DECODE_MAX_BYTES = 1_000_000
"""Values longer than this (UTF-8 bytes) are indexed as stored, undecoded: decoding reads the whole
value inside the writer's transaction, and a tool call or message of a megabyte is a file's
contents, not words anyone searches for. Tool-call JSON of a memory or terminal call is well under
10 kB; 1 MB decodes in about 20-30 ms on the 2-core test machine."""

PREFIXES = ("\x00json:", "\x1ejson:")
"""How each program marks list/dict message content stored as JSON text: the reference's
``SessionDB._CONTENT_JSON_PREFIX`` and ours (:data:`hermes_memory.sessions.codec.JSON_CONTENT_PREFIX`)."""

_BS = "char(92)"  # a backslash, spelled so that no quoting layer can eat it


def _prefix_blob(prefix: str) -> str:
    return "x'" + prefix.encode("utf-8").hex() + "'"


def _leaves(alias: str, source: str, nested: str | None) -> str:
    """SQL subquery: keys and leaf values of ``json_tree(source)``; a text leaf that is JSON with a
    backslash in it is replaced by ``nested`` (which reads ``{alias}.atom``) when given."""
    key = f"CASE WHEN typeof({alias}.key) = 'text' THEN {alias}.key || ' ' ELSE '' END"
    leaf = f"CASE WHEN {alias}.type IN ('object', 'array') THEN '' "
    if nested is not None:
        leaf += (f"WHEN {alias}.type = 'text' AND instr({alias}.atom, {_BS}) > 0 "
                 f"AND substr(ltrim({alias}.atom), 1, 1) IN ('{{', '[') AND json_valid({alias}.atom) "
                 f"THEN coalesce({nested}, '') ")
    leaf += f"ELSE coalesce(CAST({alias}.atom AS TEXT), '') END"
    return (f"(SELECT group_concat({key} || {leaf}, ' ') "
            f"FROM json_tree(CASE WHEN json_valid({source}) THEN {source} ELSE '[]' END) AS {alias})")


def _json_text(x: str) -> str:
    """SQL: text ``x`` (JSON, no prefix) decoded when it holds a backslash and is valid JSON."""
    return (f"CASE WHEN instr({x}, {_BS}) = 0 OR length(CAST({x} AS BLOB)) > {DECODE_MAX_BYTES} "
            f"OR NOT json_valid({x}) THEN {x} ELSE {_checked(x, _tree(x))} END")


def _tree(source: str) -> str:
    return _leaves("hm_j1", source, _leaves("hm_j2", "hm_j1.atom", None))


def _checked(raw: str, tree: str) -> str:
    """SQL: ``tree`` (the decoded text of ``raw``), or ``raw`` itself when the decoding holds a lone
    surrogate (an escape ``\\ud800`` without its pair: SQLite decodes it to bytes that are not
    UTF-8, which no reader of the text could decode; checked only when ``raw`` has a ``\\ud``
    escape, a pair, an emoji, decodes to valid UTF-8) or a ``\\u0000`` (SQLite's text ends at
    the NUL it decodes to, which would cut the rest of the value from the index)."""
    lone = ("(instr(hex(hm_d.d), 'EDA') + instr(hex(hm_d.d), 'EDB') > 0)")
    return (f"(SELECT CASE WHEN (instr({raw}, {_BS} || 'ud') > 0 OR instr({raw}, {_BS} || 'uD') > 0) AND {lone} "
            f"THEN {raw} WHEN instr({raw}, {_BS} || 'u0000') > 0 THEN {raw} "
            f"ELSE hm_d.d END FROM (SELECT {tree} AS d) AS hm_d)")


def decoded(x: str, prefixed: bool = False) -> str:
    """SQL expression: the text to index for the column expression ``x`` (see the module doc).

    ``prefixed``: ``x`` is message content, which holds JSON only behind one of :data:`PREFIXES`
    (the prefix is then dropped and the JSON decoded) or when it is a tool's JSON output (text
    starting with ``{`` or ``[``, decoded the same way); any other content is returned as stored.
    NULL stays NULL."""
    if not prefixed:
        return f"(CASE WHEN {x} IS NULL THEN NULL ELSE {_json_text(x)} END)"
    parts = ["CASE WHEN " + x + " IS NULL OR instr(" + x + f", {_BS}) = 0 THEN {x}"]
    for prefix in PREFIXES:
        body = f"CAST(substr(CAST({x} AS BLOB), {len(prefix.encode('utf-8')) + 1}) AS TEXT)"
        blob_prefix = _prefix_blob(prefix)
        parts.append(f"WHEN substr(CAST({x} AS BLOB), 1, {len(prefix.encode('utf-8'))}) = {blob_prefix} "
                     f"THEN (CASE WHEN json_valid({body}) AND length(CAST({x} AS BLOB)) <= {DECODE_MAX_BYTES} "
                     f"THEN {_checked(x, _tree(body))} ELSE {x} END)")
    parts.append(f"WHEN substr(ltrim({x}), 1, 1) IN ('{{', '[') THEN {_json_text(x)}")
    parts.append(f"ELSE {x} END")
    return "(" + " ".join(parts) + ")"
