"""Holographic memory provider: a fully local fact store (SQLite + FTS5 + HRR vectors).

docs/providers.md §4. Tools: ``fact_store`` (add, search, probe, related, reason, contradict, update,
remove, list) and ``fact_feedback`` (helpful / unhelpful trust scoring). Recall before each turn
is a hybrid keyword + HRR search formatted as ``## Holographic Memory`` bullets. Built-in memory
writes are mirrored as facts. numpy is optional: without it the provider works on keywords
(probe/related/reason fall back to search) and says so in its system prompt block.

Configuration: the ``holographic:`` section of ``config.yaml`` (the reference's
``plugins.hermes-memory-store`` section is read as a fallback):

=========================  =========================================  ==============
key                        meaning                                    default
=========================  =========================================  ==============
db_path                    SQLite file; ``$HERMES_HOME`` is expanded  ``$HERMES_HOME/memory_store.db``
auto_extract               harvest preferences/decisions at session   false
                           end (strict boolean parsing, #57682)
default_trust              trust of a new fact (0..1)                 0.5
min_trust_threshold        facts below this are not recalled          0.3
temporal_decay_half_life   days; 0 = no decay                         0
hrr_dim                    HRR vector dimension                       1024
hrr_weight                 weight of HRR similarity in search         0.3
=========================  =========================================  ==============
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

from hermes_memory.config import load_config
from hermes_memory.errors import ConfigError
from hermes_memory.plugins.holographic import hrr, semantic
from hermes_memory.plugins.holographic.retrieval import FactRetriever
from hermes_memory.plugins.holographic.store import CATEGORIES, MAX_FACT_CHARS, FactStore
from hermes_memory.providers.base import ConfigField, MemoryProvider, is_trivial_prompt
from hermes_memory.wording import clause

logger = logging.getLogger(__name__)

ACTIONS = ("add", "search", "probe", "related", "reason", "contradict", "update", "remove", "list")
WRITE_ACTIONS = {"add", "update", "remove"}
MIRROR_TAG = "builtin-memory"

FACT_STORE_SCHEMA: dict[str, Any] = {
    "name": "fact_store",
    "description": (
        "Long-term structured fact memory (local). Actions: add (store a durable fact), search (keyword + "
        "semantic), probe (facts about one entity), related (facts connected to an entity), reason (facts "
        "linking several entities), contradict (find facts that disagree, with the reason), update, remove, list. "
        "Store stable facts about the user, projects and tools; not transient task state."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "content": {"type": "string", "description": "Fact text (add, update)."},
            "query": {"type": "string", "description": "Search text (search)."},
            "entity": {"type": "string", "description": "Entity name (probe, related)."},
            "entities": {"type": "array", "items": {"type": "string"},
                         "description": "Entity names: for reason, the entities to connect; for add and update, "
                         "entities to link to the fact besides those found in its text."},
            "fact_id": {"type": "integer", "description": "Fact id (update, remove)."},
            "category": {"type": "string", "enum": list(CATEGORIES)},
            "tags": {"type": "string", "description": "Comma-separated tags."},
            "trust_delta": {"type": "number", "description": "Change of trust (update)."},
            "min_trust": {"type": "number", "description": "Minimum trust (default 0.3)."},
            "limit": {"type": "integer", "description": "Maximum results (default 10)."},
        },
        "required": ["action"],
    },
}
FACT_FEEDBACK_SCHEMA: dict[str, Any] = {
    "name": "fact_feedback",
    "description": "Rate a recalled fact: helpful raises its trust (+0.05), unhelpful lowers it (-0.10).",
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["helpful", "unhelpful"]},
            "fact_id": {"type": "integer"},
        },
        "required": ["action", "fact_id"],
    },
}

ACTION_FIELDS: dict[str, tuple[str, ...]] = {
    "add": ("content", "category", "tags", "entities"),
    "search": ("query", "content", "category", "min_trust", "limit"),  # content: the reference's alias of query
    "probe": ("entity", "category", "min_trust", "limit"),
    "related": ("entity", "min_trust", "limit"),
    "reason": ("entities", "min_trust", "limit"),
    "contradict": ("limit",),
    "update": ("fact_id", "content", "category", "tags", "trust_delta", "entities"),
    "remove": ("fact_id",),
    "list": ("category", "min_trust", "limit"),
}
"""The fields each ``fact_store`` action uses (besides ``action``); any other field is refused."""


def _unknown_arguments(tool_name: str, args: dict[str, Any]) -> str | None:
    """A tool error naming every argument the tool does not take, else ``None``.

    Beyond the schema's fields, ``fact_store`` refuses a field its action does not use (an
    ``entities`` on ``list`` would otherwise be ignored without a word).
    """
    schema = {"fact_store": FACT_STORE_SCHEMA, "fact_feedback": FACT_FEEDBACK_SCHEMA}.get(tool_name)
    if schema is None:
        return None
    known = schema["parameters"]["properties"]
    extra = [k for k in args if k not in known]
    if extra:
        names = ", ".join(repr(k) for k in extra)
        return MemoryProvider.tool_error(f"unknown argument(s) {names} for {tool_name}; it takes: {', '.join(known)}",
                                         fields=extra)
    action = str(args.get("action") or "").strip().lower()
    if tool_name != "fact_store" or action not in ACTION_FIELDS:
        return None
    unused = [k for k in args if k != "action" and k not in ACTION_FIELDS[action]]
    if not unused:
        return None
    names = ", ".join(repr(k) for k in unused)
    return MemoryProvider.tool_error(f"argument(s) {names} not used by fact_store action {action!r}; it takes: "
                                     f"{', '.join(ACTION_FIELDS[action])}", fields=unused)


_FACT = {
    "type": "object",
    "properties": {"fact_id": {"type": "integer"}, "content": {"type": "string"}, "category": {"type": "string"},
                   "tags": {"type": "string"}, "trust_score": {"type": "number"}},
    "required": ["fact_id", "content"],
}
_FACTS = {"type": "array", "items": _FACT}
_ERROR = {"title": "error", "properties": {"error": {"type": "string"}}, "required": ["error"]}
MCP_TOOL_METADATA: dict[str, dict[str, Any]] = {
    "fact_store": {
        # remove deletes and update overwrites; everything stays in the local database
        "annotations": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False},
        "output_schema": {
            "type": "object",
            "anyOf": [
                {"title": "add", "properties": {"fact_id": {"type": "integer"}, "status": {"enum": ["added", "exists"]},
                                                "entities": {"type": "array", "items": {"type": "string"}}},
                 "required": ["fact_id", "status", "entities"]},
                {"title": "search, probe, related, reason, contradict",
                 "properties": {"results": {"type": "array", "items": {"type": "object"}}, "count": {"type": "integer"}},
                 "required": ["results", "count"]},
                {"title": "update", "properties": {"updated": {"const": True}, "fact": _FACT},
                 "required": ["updated", "fact"]},
                {"title": "remove", "properties": {"removed": {"const": True}, "fact_id": {"type": "integer"}},
                 "required": ["removed", "fact_id"]},
                {"title": "list", "properties": {"facts": _FACTS, "count": {"type": "integer"}},
                 "required": ["facts", "count"]},
                _ERROR,
            ],
        },
    },
    "fact_feedback": {
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,
                        "openWorldHint": False},
        "output_schema": {
            "type": "object",
            "anyOf": [
                {"title": "rated", "properties": {"fact_id": {"type": "integer"}, "old_trust": {"type": "number"},
                                                  "new_trust": {"type": "number"}, "helpful_count": {"type": "integer"}},
                 "required": ["fact_id", "old_trust", "new_trust", "helpful_count"]},
                _ERROR,
            ],
        },
    },
}
"""What the MCP server lists for these tools besides their input schemas (see :mod:`hermes_memory.mcp.schemas`)."""

_PREF = re.compile(r"\b(i (?:really )?(?:prefer|like|love|use|want|need|hate|dislike)|my (?:favou?rite|preferred|default) "
                   r"\w+ (?:is|are)|i (?:always|never|usually))\b", re.IGNORECASE)
_DECISION = re.compile(r"\b(we (?:decided|agreed|chose)|the project (?:uses|needs|requires))\b", re.IGNORECASE)
_SUMMARY_MARKERS = ("[context compaction", "[compressed", "summary of earlier conversation", "<memory-context>")
_TRUE = {"1", "true", "yes", "on", "y"}
_FALSE = {"0", "false", "no", "off", "n", ""}


def parse_bool(value: Any, default: bool = False) -> bool:
    """Strict truthiness: bools as is; strings ``true/yes/on/1`` vs ``false/no/off/0``; else ``default``."""
    if isinstance(value, bool):
        return value
    if value is None:
        return default
    if isinstance(value, (int, float)):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return default


class HolographicProvider(MemoryProvider):
    """Local fact memory with structured recall (SQLite, FTS5, HRR).

    Args:
        hermes_home: data home (settings are read from its ``config.yaml`` at ``initialize``).
        config: settings overriding ``config.yaml`` (keys of the table in the module docstring).
    """

    def __init__(self, hermes_home: str | None = None, config: dict[str, Any] | None = None) -> None:
        self._home = hermes_home
        self._override = dict(config or {})
        self.settings: dict[str, Any] = {}
        self.store: FactStore | None = None
        self.retriever: FactRetriever | None = None
        self.indexer: Any = None  # semantic.FactIndexer with search.embeddings: on
        self.semantic_status = "off"
        self.agent_context = "primary"
        self.session_id = ""
        self.init_error = ""

    # ------------------------------------------------------------------ required
    @property
    def name(self) -> str:
        return "holographic"

    def is_available(self) -> bool:
        """True when SQLite has FTS5 (checked in memory; no files, no network)."""
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        try:
            con = sqlite3.connect(":memory:")
            con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
            con.close()
        except sqlite3.Error:
            return "this Python's SQLite lacks FTS5; install a Python built with a recent SQLite"
        return ""

    def get_config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("db_path", "SQLite file for facts ($HERMES_HOME is expanded)", default="$HERMES_HOME/memory_store.db"),
            ConfigField("auto_extract", "Harvest stated preferences and decisions at session end", default=False, type="bool"),
            ConfigField("default_trust", "Trust of a new fact (0..1)", default=0.5, type="float", min=0, max=1),
            ConfigField("min_trust_threshold", "Facts below this trust are not recalled (0..1)", default=0.3,
                        type="float", min=0, max=1),
            ConfigField("temporal_decay_half_life", "Recall decay half-life in days (0 = off)", default=0,
                        type="float", min=0),
            # 16..65536: below 16 HRR similarities are noise; above 65536 each fact's vector and each
            # atom cost over 256 KB and thousands of SHA-256 rounds (ours; the reference has no bound)
            ConfigField("hrr_dim", "HRR vector dimension (16..65536)", default=1024, type="int", min=16, max=65536),
            ConfigField("hrr_weight", "Weight of HRR similarity in search (0..1)", default=0.3, type="float",
                        min=0, max=1),
        ]

    def _load_settings(self, home: str) -> dict[str, Any]:
        values: dict[str, Any] = {}
        try:
            cfg = load_config(Path(home) / "config.yaml")
            extra = cfg.model_extra or {}
            legacy = (extra.get("plugins") or {}).get("hermes-memory-store") if isinstance(extra.get("plugins"), dict) else None
            for section in (legacy, extra.get("holographic")):
                if isinstance(section, dict):
                    values.update(section)
        except Exception as exc:  # noqa: BLE001 - a bad config must be reported, defaults used for the rest
            logger.error("holographic: cannot read settings from %s/config.yaml: %s", home, exc)
        values.update(self._override)
        defaults = {f.key: f.default for f in self.get_config_schema()}
        out = {**defaults, **{k: v for k, v in values.items() if v is not None}}
        out["auto_extract"] = parse_bool(out["auto_extract"])
        for key, kind in (("default_trust", float), ("min_trust_threshold", float),
                          ("temporal_decay_half_life", float), ("hrr_weight", float), ("hrr_dim", int)):
            try:
                out[key] = kind(out[key])
            except (TypeError, ValueError):
                raise ConfigError(f"holographic.{key} in {home}/config.yaml must be a {kind.__name__}, "
                                  f"got {out[key]!r}; fix it or delete the key to use the default") from None
        for f in self.get_config_schema():  # out of range: refuse loudly, never clamp silently
            value = out[f.key]
            if f.type in ("int", "float") and (value != value or (f.min is not None and value < f.min)
                                               or (f.max is not None and value > f.max)):
                bounds = f"between {f.min:g} and {f.max:g}" if f.max is not None else f"at least {f.min:g}"
                raise ConfigError(f"holographic.{f.key} in {home}/config.yaml must be {bounds}, got {value!r}; "
                                  "fix it or delete the key to use the default")
        raw = str(out["db_path"] or defaults["db_path"])
        raw = raw.replace("${HERMES_HOME}", home).replace("$HERMES_HOME", home)
        out["db_path"] = str(Path(os.path.expanduser(raw)))
        return out

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Open the store at ``db_path``. A corrupt or unreadable database raises (loudly), never half-registers."""
        home = str(kwargs.get("hermes_home") or self._home or os.environ.get("HERMES_HOME") or Path("~/.hermes").expanduser())
        self._home = home
        self.session_id = session_id
        self.agent_context = kwargs.get("agent_context") or "primary"
        self.settings = self._load_settings(home)
        if self.store is not None:
            self.store.close()
        try:
            self.store = FactStore(self.settings["db_path"], default_trust=self.settings["default_trust"],
                                   hrr_dim=self.settings["hrr_dim"])
        except (sqlite3.DatabaseError, OSError) as exc:  # OSError: its folder cannot be created
            self.store = None
            self.init_error = (f"cannot open the holographic fact database {self.settings['db_path']}: {clause(exc)}. "
                               "Move the file away (it will be recreated) or set holographic.db_path.")
            raise RuntimeError(self.init_error) from exc
        self.init_error = ""
        self._stop_indexer()  # search.embeddings: on -> fused fact search, vectors made in the background
        vectors, self.indexer, self.semantic_status = semantic.attach(self.store, home)
        self.retriever = FactRetriever(self.store, hrr_weight=self.settings["hrr_weight"],
                                       half_life_days=self.settings["temporal_decay_half_life"], semantic=vectors)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [json.loads(json.dumps(FACT_STORE_SCHEMA)), json.loads(json.dumps(FACT_FEEDBACK_SCHEMA))]

    # ------------------------------------------------------------------ prompt + recall
    def system_prompt_block(self) -> str:
        if self.store is None:
            return ""
        n = self.store.count()
        mode = ("structured recall: probe/related/reason over entities, contradiction checks"
                if self.store.use_hrr else "keyword fallback (numpy not installed): probe/related/reason use keyword search")
        if n == 0:
            return ("# Holographic Memory\nYour fact store is empty. Proactively add durable facts about the user, "
                    f"their projects and tools with the fact_store tool ({mode}).")
        return (f"# Holographic Memory\n{n} facts stored; relevant ones are recalled automatically each turn. "
                f"Use fact_store to add, search or check facts ({mode}) and fact_feedback to rate recalled facts.")

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Top 5 facts for ``query`` above ``min_trust_threshold``: ``## Holographic Memory`` + ``- [trust] content``."""
        if self.retriever is None or is_trivial_prompt(query):
            return ""
        results = self.retriever.search(query, min_trust=self.settings.get("min_trust_threshold", 0.3), limit=5)
        if not results:
            return ""
        lines = ["## Holographic Memory"] + [f"- [{r['trust_score']:.2f}] {r['content']}" for r in results]
        return "\n".join(lines)

    # ------------------------------------------------------------------ tools
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run ``fact_store`` or ``fact_feedback``; always a JSON string (errors as ``{"error": ...}``), never raises."""
        if self.store is None or self.retriever is None:
            return self.tool_error(self.init_error or "the holographic provider is not initialised; call initialize() first")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            return self.tool_error(f"arguments must be a JSON object, got {type(args).__name__}")
        unknown = _unknown_arguments(tool_name, args)
        if unknown:
            return unknown
        try:
            if tool_name == "fact_store":
                self._kick()
                return self._fact_store(args)
            if tool_name == "fact_feedback":
                return self._fact_feedback(args)
        except (ValueError, TypeError, OverflowError) as exc:
            return self.tool_error(str(exc))
        except sqlite3.Error as exc:
            logger.error("holographic: database error in %s: %s", tool_name, exc)
            return self.tool_error(f"database error: {exc}")
        except Exception as exc:  # noqa: BLE001 - a tool result, never an exception, reaches the model
            logger.exception("holographic: %s failed", tool_name)
            return self.tool_error(f"{tool_name} failed: {type(exc).__name__}: {exc}")
        return self.tool_error(f"unknown tool {tool_name!r}; this provider offers fact_store and fact_feedback")

    def _read_only(self) -> str | None:
        if not self.writes_allowed(self.agent_context):
            return self.tool_error(f"fact_store is read-only in the {self.agent_context!r} context")
        return None

    @staticmethod
    def _int(args: dict[str, Any], key: str) -> int:
        """A fact id: an integer (or integral number / numeric string) within SQLite's 64-bit range."""
        value = args.get(key)
        if value is None or isinstance(value, bool):
            raise ValueError(f"'{key}' is required (an integer fact id)")
        try:
            number = float(value) if isinstance(value, float) else int(value)
            if isinstance(number, float) and not number.is_integer():
                raise ValueError
            result = int(number)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"'{key}' must be an integer, got {value!r}") from None
        if not -(2**63) <= result < 2**63:
            raise ValueError(f"'{key}' {value!r} is out of range: no fact has that id")
        return result

    @staticmethod
    def _num(args: dict[str, Any], key: str) -> float | None:
        """A finite number (or numeric string), or ``None`` when absent."""
        value = args.get(key)
        if value is None:
            return None
        try:
            if isinstance(value, bool):
                raise ValueError
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"'{key}' must be a number, got {value!r}") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise ValueError(f"'{key}' must be a finite number, got {value!r}")
        return number

    @staticmethod
    def _text(args: dict[str, Any], key: str) -> str | None:
        """A string argument, or ``None`` when absent."""
        value = args.get(key)
        if value is None or isinstance(value, str):
            return value
        raise ValueError(f"'{key}' must be a string, got {type(value).__name__}")

    @staticmethod
    def _names(args: dict[str, Any], key: str) -> list[str]:
        """A list of names (a comma-separated string is split), ``[]`` when absent."""
        value = args.get(key)
        if value is None:
            return []
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        raise ValueError(f"'{key}' must be a list of entity names")

    def mcp_tool_metadata(self) -> dict[str, dict[str, Any]]:
        """MCP annotations and output schemas of ``fact_store`` and ``fact_feedback`` (read by the MCP server)."""
        return json.loads(json.dumps(MCP_TOOL_METADATA))

    def _fact_store(self, args: dict[str, Any]) -> str:
        assert self.store is not None and self.retriever is not None
        action = str(args.get("action") or "").strip().lower()
        if action not in ACTIONS:
            return self.tool_error(f"unknown action {action!r}; use one of: {', '.join(ACTIONS)}")
        if action in WRITE_ACTIONS and (blocked := self._read_only()):
            return blocked
        limit = max(1, min(100, int(self._num(args, "limit") or 10)))
        min_trust = self._num(args, "min_trust")
        if min_trust is None:
            min_trust = self.settings["min_trust_threshold"]
        category = self._text(args, "category") or None
        tags = args.get("tags")
        if tags is not None and not isinstance(tags, str):
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                raise ValueError("'tags' must be a comma-separated string")
            tags = ",".join(tags)
        if action == "add":
            fact_id, created = self.store.add_fact(self._text(args, "content") or "", category or "general",
                                                   tags or "", entities=self._names(args, "entities"))
            return self.tool_result({"fact_id": fact_id, "status": "added" if created else "exists",
                                     "entities": self.store.entities_of(fact_id)})
        if action == "search":
            query = str(args.get("query") or args.get("content") or "")
            if not query.strip():
                return self.tool_error("'query' is required for search")
            results = self.retriever.search(query, min_trust=min_trust, limit=limit, category=category)
        elif action == "probe":
            results = self.retriever.probe(str(args.get("entity") or ""), category=category, min_trust=min_trust, limit=limit)
        elif action == "related":
            results = self.retriever.related(str(args.get("entity") or ""), min_trust=min_trust, limit=limit)
        elif action == "reason":
            ents = args.get("entities")
            if isinstance(ents, str):
                ents = [e for e in ents.split(",") if e.strip()]
            if ents is not None and not isinstance(ents, list):
                return self.tool_error("'entities' must be a list of entity names")
            if not ents:
                return self.tool_error("'entities' (a list of names) is required for reason")
            results = self.retriever.reason(list(ents), min_trust=min_trust, limit=limit)
        elif action == "contradict":
            results = self.retriever.contradict(limit=limit, min_trust=0.0)
        elif action == "update":
            fact_id = self._int(args, "fact_id")
            names = self._names(args, "entities")  # checked before anything is written
            ok = self.store.update_fact(fact_id, content=self._text(args, "content"), category=category,
                                        tags=tags, trust_delta=self._num(args, "trust_delta"))
            if not ok:
                return self.tool_error(f"no fact with id {fact_id}")
            if names:
                self.store.link_entities(fact_id, names)
            row = self.store.get(fact_id)
            if row is None:  # removed by another process between the update and this read
                return self.tool_error(f"no fact with id {fact_id}")
            return self.tool_result({"updated": True, "fact": self.store.row_to_fact(row)})
        elif action == "remove":
            fact_id = self._int(args, "fact_id")
            if not self.store.remove_fact(fact_id):
                return self.tool_error(f"no fact with id {fact_id}")
            return self.tool_result({"removed": True, "fact_id": fact_id})
        else:  # list
            rows = self.store.list_facts(category=category, min_trust=self._num(args, "min_trust") or 0.0, limit=limit)
            facts = [self.store.row_to_fact(r) for r in rows]
            return self.tool_result({"facts": facts, "count": len(facts)})
        return self.tool_result({"results": results, "count": len(results)})

    def _fact_feedback(self, args: dict[str, Any]) -> str:
        assert self.store is not None
        action = str(args.get("action") or "").strip().lower()
        if action not in ("helpful", "unhelpful"):
            return self.tool_error("action must be 'helpful' or 'unhelpful'")
        if blocked := self._read_only():
            return blocked
        fact_id = self._int(args, "fact_id")
        result = self.store.feedback(fact_id, action == "helpful")
        if result is None:
            return self.tool_error(f"no fact with id {fact_id}")
        return self.tool_result(result)

    # ------------------------------------------------------------------ hooks
    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        """Mirror built-in memory writes as facts tagged ``builtin-memory``.

        ``add`` stores a fact (``user`` target → ``user_pref``, else ``general``); content beyond
        ``MAX_FACT_CHARS`` is cut. Beyond the reference
        (#55095), ``replace`` updates and ``remove`` deletes the mirrored fact matching
        ``metadata["old_text"]`` (only facts this mirror created are touched).
        """
        if self.store is None or not self.writes_allowed(self.agent_context):
            return
        content = (content or "")[:MAX_FACT_CHARS]  # a long built-in entry is mirrored by its head
        category = "user_pref" if target == "user" else "general"
        old = (metadata or {}).get("old_text") or ""
        if action in ("replace", "remove") and old:
            with self.store.lock:
                row = self.store.conn.execute(
                    "SELECT fact_id FROM facts WHERE tags LIKE ? AND instr(content, ?) > 0 ORDER BY fact_id LIMIT 1",
                    (f"%{MIRROR_TAG}%", old)).fetchone()
            if row is not None:
                if action == "remove":
                    self.store.remove_fact(row[0])
                    return
                if content and content.strip():
                    try:
                        self.store.update_fact(row[0], content=content)
                    except ValueError:  # new text already stored as another fact
                        self.store.remove_fact(row[0])
                    return
        if action in ("add", "replace") and content and content.strip():
            self.store.add_fact(content, category, f"{MIRROR_TAG},{target}")
            self._kick()

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """With ``auto_extract``: store user messages stating preferences (``user_pref``) or decisions (``project``)."""
        if self.store is None or not self.settings.get("auto_extract") or not self.writes_allowed(self.agent_context):
            return
        for msg in messages or []:
            if msg.get("role") != "user" or not isinstance(msg.get("content"), str):
                continue
            text = msg["content"]
            low = text.lower()
            marker = next((m for m in _SUMMARY_MARKERS if m in low), None)
            if marker:  # keep only what precedes a merged summary
                text = text[:low.index(marker)]
            text = text.strip()
            if len(text) < 10:
                continue
            if _PREF.search(text):
                self.store.add_fact(text[:400], "user_pref", "auto-extract")
            elif _DECISION.search(text):
                self.store.add_fact(text[:400], "project", "auto-extract")
        self._kick()

    def _kick(self) -> None:
        if self.indexer is not None:
            self.indexer.kick()

    def _stop_indexer(self) -> None:
        if self.indexer is not None:
            self.indexer.stop()
            self.indexer = None

    def shutdown(self) -> None:
        self._stop_indexer()
        if self.store is not None:
            self.store.close()
            self.store = None
            self.retriever = None

    def backup_paths(self) -> list[str]:
        return [self.settings["db_path"]] if self.settings.get("db_path") else []


def register(ctx: Any) -> None:
    """Plugin entry: register the provider with the host's collector."""
    ctx.register_memory_provider(HolographicProvider())


__all__ = ["HolographicProvider", "hrr", "parse_bool", "register"]
