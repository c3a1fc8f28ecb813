"""What the dashboard's pages show, as plain dicts (the HTML pages and the ``/api`` JSON both use them).

Everything goes through the layers' own code: memory through :class:`~hermes_memory.memory.MemoryStore`
and the ``memory`` tool, sessions through :class:`~hermes_memory.sessions.db.SessionDB` and the
``session_search`` tool, providers through provider discovery and the server's
:class:`~hermes_memory.providers.MemoryManager`. The presentation queries (a filtered page of
sessions, sums per day) are the stores' public read-only views
(:mod:`hermes_memory.sessions.browse`), so they run on SQLite and PostgreSQL alike; no SQL here.

Times are Unix epoch seconds; days are UTC calendar days; token counts are tokens, memory sizes
characters (delimiters included, as in the prompt header).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from hermes_memory.sessions.browse import SessionQuery

if TYPE_CHECKING:
    from hermes_memory.mcp.server import MemoryServer

logger = logging.getLogger(__name__)

PAGE_SIZE = 50
"""Sessions per page of the session list."""
TRANSCRIPT_PAGE = 400
"""Messages of one session shown per transcript page."""
INSIGHT_DAYS = 30
"""Days (UTC, ending today) of the tokens-per-day chart."""
USAGE_SAMPLES = 200
"""Most session starts sampled for the memory-usage-over-time chart (newest first)."""
SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "credential", "auth", "jwt", "cookie", "dsn")
"""A setting whose name contains one of these is a secret: shown masked, never in full."""

# The prompt header MemoryStore renders into each block: "<HEADER> [P% — C/L chars]".
_USAGE_HEADER = re.compile(r"^(MEMORY \(your personal notes\)|USER PROFILE \(who the user is\)) "
                           r"\[(\d+)% — ([\d,]+)/([\d,]+) chars\]", re.MULTILINE)
_HEADER_TARGET = {"MEMORY (your personal notes)": "memory", "USER PROFILE (who the user is)": "user"}


# --------------------------------------------------------------------------------------------
# secrets
# --------------------------------------------------------------------------------------------


def is_secret_name(name: str) -> bool:
    """True when a setting or variable named ``name`` holds a secret (see :data:`SECRET_WORDS`)."""
    low = name.lower()
    if low.endswith("_env"):  # the *name* of a variable (e.g. api_key_env), not its value
        return False
    return any(w in low for w in SECRET_WORDS)


def mask(value: Any) -> str:
    """A secret as the dashboard shows it: ``"sk-…t123"`` (first 3 and last 4 characters) for values of
    16 characters or more, ``"set"`` for shorter ones, ``"not set"`` for empty ones. Never the whole value."""
    text = "" if value is None else str(value)
    if not text:
        return "not set"
    if len(text) < 16:
        return "set"
    return f"{text[:3]}…{text[-4:]}"


def masked_settings(values: dict[str, Any], secret_keys: AbstractSet[str] = frozenset()) -> dict[str, Any]:
    """``values`` with every secret (named in ``secret_keys`` or by :func:`is_secret_name`) masked.

    Nested dicts are masked the same way; lists and other values of secret keys are masked whole.
    """
    out: dict[str, Any] = {}
    for k, v in values.items():
        if k in secret_keys or is_secret_name(str(k)):
            out[k] = mask(v if not isinstance(v, (dict, list)) else json.dumps(v))
        elif isinstance(v, dict):
            out[k] = masked_settings(v, secret_keys)
        else:
            out[k] = v
    return out


# --------------------------------------------------------------------------------------------
# memory
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProviderProblem:
    """The configured external provider ``name`` could not be loaded: ``error`` is the
    :class:`~hermes_memory.errors.ProviderError` message (what failed and how to fix it)."""

    name: str
    error: str


class Backend:
    """The dashboard's view of one data home, over the layers of a :class:`MemoryServer`.

    ``provider_problem``: the configured provider failed to load, so ``server`` runs on built-in
    memory only (``hermes-memory ui`` starts anyway); pages and ``/api/providers`` show the error.

    ``server``: the MCP memory server of ``serve --transport http`` (or the one ``hermes-memory ui``
    opens for itself); its ``state.db`` connection, config and provider are shared, so a write here
    is the same write an MCP client makes. ``started_snapshot`` is the frozen snapshot taken when
    the dashboard started (what a session starting then saw).
    """

    def __init__(self, server: MemoryServer, provider_problem: ProviderProblem | None = None) -> None:
        from hermes_memory.mcp.server import render_snapshot

        self.server = server
        self.provider_problem = provider_problem
        self.home = server.home
        self.config = server.config
        self.db = server.db
        self.fixed_user_id = server.fixed_user_id
        self.started_at = time.time()
        self.started_snapshot = render_snapshot(self.store(self.fixed_user_id))

    # -- memory ---------------------------------------------------------------------------------
    def store(self, user_id: str | None) -> Any:
        """A fresh :class:`MemoryStore` loaded from disk (live state; its own failure counter).

        Raises ``ValueError`` for an unsafe ``user_id``."""
        from hermes_memory.memory import open_memory_store

        store = open_memory_store(self.home, self.config, user_id=user_id or None)
        store.load_from_disk()
        return store

    def profile_ids(self) -> list[str]:
        """User ids with a gateway profile (``memories/users/<id>/USER.md``), sorted."""
        from hermes_memory.memory import validate_user_id
        from hermes_memory.storage import resolve_storage

        if resolve_storage(self.config, self.home.root).is_postgres:
            return self.store(None).backend.user_ids()  # rows in the database: no folder to list
        users = self.home.memories_dir / "users"
        out = []
        try:
            for d in users.iterdir():
                if (d / "USER.md").is_file():
                    try:
                        validate_user_id(d.name)
                    except ValueError:
                        continue
                    out.append(d.name)
        except OSError:
            return []
        return sorted(out)

    def memory_view(self, user_id: str | None) -> dict[str, Any]:
        """Both blocks of ``user_id``'s view (``None``: the default profile), live from disk.

        ``{"user_id", "profiles", "profiles_dir" (their folder; None: rows in the database), "targets":
        {"memory"|"user": {"file", "entries": [str], "usage":
        MemoryStore.usage(), "enabled": bool}}, "live_snapshot", "started_snapshot"}``.
        """
        from hermes_memory.mcp.server import render_snapshot

        if self.fixed_user_id is not None:
            user_id = self.fixed_user_id
        store = self.store(user_id)
        mem = self.config.memory
        targets = {}
        for target, enabled in (("memory", mem.memory_enabled), ("user", mem.user_profile_enabled)):
            targets[target] = {
                "file": store.location(target),  # a path, or the database and key
                "entries": store.entries(target),
                "usage": store.usage(target),
                "enabled": enabled,
            }
        from hermes_memory.storage import resolve_storage

        on_pg = resolve_storage(self.config, self.home.root).is_postgres
        return {"user_id": user_id, "fixed_user": self.fixed_user_id is not None, "profiles": self.profile_ids(),
                "profiles_dir": None if on_pg else "memories/users/",
                "targets": targets, "live_snapshot": render_snapshot(store),
                "started_snapshot": self.started_snapshot}

    def memory_write(self, user_id: str | None, args: dict[str, Any]) -> dict[str, Any]:
        """Run one ``memory`` tool call (``{"action", "target", "content"?, "old_text"?}``) for ``user_id``.

        Same dispatcher, store and provider mirroring as the MCP ``memory`` tool: a committed write
        of MEMORY.md or the server's own USER.md is mirrored to the external provider; a threat-scan
        refusal or an over-limit error comes back as the tool's own result with nothing written.
        Returns the tool's JSON result, parsed.
        """
        from hermes_memory.memory import memory_tool

        if self.fixed_user_id is not None:
            user_id = self.fixed_user_id
        try:
            store = self.store(user_id)
        except ValueError as exc:
            return {"success": False, "error": f"user {user_id!r}: {exc}"}
        clean = {k: v for k, v in args.items() if k in ("action", "target", "content", "old_text") and v is not None}
        mem = self.config.memory
        setting = {"memory": "memory_enabled", "user": "user_profile_enabled"}.get(str(clean.get("target")))
        if setting and not getattr(mem, setting):
            # Same rule as the MCP surface, which offers no memory tool for a disabled store.
            return {"success": False, "error": f"{store.file_name(clean['target'])} is turned off in config.yaml "
                    f"(memory.{setting}: false), so it is not written. Nothing was written."}
        # The forms post the entry as the page showed it: they act on that entry or on none, so a
        # stale page never removes or overwrites an entry another writer changed since.
        result_text = memory_tool(store=store, exact=clean.get("action") in ("replace", "remove"), **clean)
        result = json.loads(result_text)
        server = self.server
        foreign_profile = clean.get("target") == "user" and user_id != self.fixed_user_id
        if server.provider is not None and not foreign_profile:
            try:
                server.manager.notify_memory_tool_write(result_text, clean)
            except Exception:  # a failing provider never breaks a write that is already on disk
                logger.exception("provider mirror of a dashboard memory write failed")
        return result

    # -- snapshots ------------------------------------------------------------------------------
    def snapshot_sessions(self, limit: int = 30) -> list[dict[str, Any]]:
        """Recent sessions whose stored system prompt holds a memory block (newest first):
        ``[{"id", "title", "source", "started_at"}]``."""
        return [{k: r[k] for k in ("id", "title", "source", "started_at")}
                for r in self.db.sessions_with_memory_blocks(limit)]

    def client_snapshots(self) -> list[dict[str, Any]]:
        """Frozen snapshots of the MCP client sessions this server holds (``serve --transport http``),
        newest first: ``[{"key", "started_at", "snapshot"}]``; ``[]`` when none (or under ``ui``).

        ``key`` is a digest of the session id (the id itself lets a client speak in that session, so it
        is never put into a page). Read from the server's table of client sessions (each took its
        snapshot at its first request)."""
        return sorted(({"key": hashlib.sha256(key.encode()).hexdigest()[:16], "started_at": started, "snapshot": snapshot}
                       for key, started, snapshot in self.server.client_states()), key=lambda c: -c["started_at"])

    def session_snapshot(self, session_id: str) -> str | None:
        """The memory blocks of the system prompt ``session_id`` started with (the frozen snapshot it
        saw), from its first block header to the end of the last block; ``None`` when it stored none."""
        s = self.db.get_session(session_id)
        prompt = (s or {}).get("system_prompt") or ""
        rule = "═" * 46
        first = prompt.find(rule)
        if first < 0:
            return None
        return prompt[first:].strip()

    # -- sessions -------------------------------------------------------------------------------
    def filter_options(self) -> dict[str, Any]:
        """Values offered by the session-list filters: ``{"sources", "users", "projects", "has_cwd"}``."""
        return {"sources": self.db.distinct_values("source"), "users": self.db.distinct_values("user_id"),
                "projects": self.db.distinct_values("cwd"), "has_cwd": "cwd" in self.db.session_columns()}

    def list_sessions(self, f: SessionFilter, page: int = 1) -> dict[str, Any]:
        """One page of sessions, newest first, matching ``f``.

        ``{"sessions": [row + "preview"], "total", "page", "pages", "filter"}``; each row has ``id,
        source, user_id, title, model, started_at, ended_at, end_reason, message_count,
        tool_call_count, input_tokens, output_tokens, cache_read_tokens, parent_session_id`` and
        ``cwd`` (``None`` when ``state.db`` records no working directory).
        """
        query = f.query(has_cwd="cwd" in self.db.session_columns())
        if query is None:  # a project filter where no session records a project: nothing matches
            return {"sessions": [], "total": 0, "page": 1, "pages": 1, "filter": f.as_dict()}
        page = max(1, int(page))
        total, sessions = self.db.session_page(query, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
        pages = max(1, -(-total // PAGE_SIZE))
        if page > pages:  # past the last page: show the last one
            page = pages
            total, sessions = self.db.session_page(query, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
        previews = self.db.first_user_texts([s["id"] for s in sessions])
        for s in sessions:
            s["preview"] = " ".join(previews.get(s["id"], "").split())[:80]
        return {"sessions": sessions, "total": total, "page": page, "pages": pages, "filter": f.as_dict()}

    def search(self, query: str, source: str | None = None, limit: int = 10) -> dict[str, Any]:
        """The ``session_search`` tool in discovery mode (its JSON result, parsed); never raises."""
        from hermes_memory.sessions.search import session_search

        args: dict[str, Any] = {"query": query, "limit": max(1, min(int(limit), 10))}
        if source:
            args["source"] = source
        return json.loads(session_search(args, self.db))

    def session_detail(self, session_id: str, page: int = 1) -> dict[str, Any] | None:
        """One session: its row, a page of its messages, its compression lineage and counters.

        ``{"session", "messages": [decoded rows], "page", "pages", "message_total", "lineage":
        [{"id", "title", "started_at", "end_reason"}] (root first, this one last), "children":
        [...same...]}``; ``None`` for an unknown session.
        """
        s = self.db.get_session(session_id)
        if s is None:
            return None
        s.pop("system_prompt", None)
        s.pop("model_config", None)
        total = self.db.message_count(session_id)
        pages = max(1, -(-total // TRANSCRIPT_PAGE))
        page = max(1, min(int(page), pages))
        messages = self.db.message_page(session_id, TRANSCRIPT_PAGE, (page - 1) * TRANSCRIPT_PAGE)
        lineage_ids = self.db.get_lineage(session_id)
        info = self.db.session_summaries(lineage_ids)
        lineage = [info.get(i, {"id": i, "title": None, "started_at": None, "end_reason": None}) for i in lineage_ids]
        children = self.db.child_sessions(session_id)
        return {"session": s, "messages": messages, "page": page, "pages": pages, "message_total": total,
                "lineage": lineage, "children": children}

    def export_session(self, session_id: str) -> dict[str, Any] | None:
        """:meth:`SessionDB.export_session` (the row and every message), ``None`` when unknown."""
        return self.db.export_session(session_id)

    def delete_session(self, session_id: str) -> bool:
        """:meth:`SessionDB.delete_session`: the session and its messages go (children are detached)."""
        return self.db.delete_session(session_id)

    # -- insights -------------------------------------------------------------------------------
    def insights(self, days: int = INSIGHT_DAYS, today: date | None = None) -> dict[str, Any]:
        """Numbers behind the Insights charts.

        ``tokens_per_day``: ``[{"day": "YYYY-MM-DD", "cached_input", "uncached_input", "output",
        "sessions"}]`` for the last ``days`` UTC days: a session's counters are spread over the
        days its replies were written (:mod:`hermes_memory.web.tokens`; ``sessions``: started that day).
        ``totals``: the same sums over all time plus ``cache_share`` (cache reads / input, 0..1).
        ``sources``: ``[{"source", "sessions"}]``, most first. ``memory_usage``: ``[{"t", "target",
        "chars", "limit", "percent", "session_id"}]`` oldest first -- see :meth:`memory_history`.
        """
        from hermes_memory.web.tokens import tokens_per_day

        today = today or datetime.now(tz=UTC).date()
        per_day = tokens_per_day(self.db, today - timedelta(days=days - 1), days)
        t = self.db.token_totals()
        inp, cached = t["input"], t["cache_read"]
        totals = {"sessions": t["sessions"], "input": inp, "cached_input": cached,
                  "uncached_input": max(0, inp - cached), "output": t["output"],
                  "cache_write": t["cache_write"], "cache_share": (cached / inp) if inp else 0.0,
                  "messages": self.db.message_count()}
        sources = [{"source": src, "sessions": n} for src, n in self.db.sessions_per_source()]
        return {"days": days, "tokens_per_day": per_day, "totals": totals, "sources": sources,
                "memory_usage": self.memory_history()}

    def memory_history(self, limit: int = USAGE_SAMPLES) -> list[dict[str, Any]]:
        """Memory usage over time, oldest first: ``[{"t", "target", "chars", "limit", "percent", "session_id"}]``.

        Where the history comes from: every agent session stores the system prompt it started with,
        and that prompt carries each memory block's header ``[P% — C/L chars]`` exactly as the model
        saw it; so each session start is one sample (the newest ``limit`` sessions that stored one),
        and the live files add a last sample now. Nothing extra is written anywhere. Sessions that
        store no system prompt (imports, MCP clients) add no sample; an empty block adds none either.
        """
        rows = self.db.sessions_with_memory_blocks(limit)
        out: list[dict[str, Any]] = []
        for r in reversed(rows):
            for m in _USAGE_HEADER.finditer(r["system_prompt"] or ""):
                out.append({"t": float(r["started_at"]), "target": _HEADER_TARGET[m.group(1)],
                            "chars": int(m.group(3).replace(",", "")), "limit": int(m.group(4).replace(",", "")),
                            "percent": int(m.group(2)), "session_id": r["id"]})
        live = self.store(self.fixed_user_id)
        now = time.time()
        for target in ("memory", "user"):
            u = live.usage(target)
            out.append({"t": now, "target": target, "chars": u["chars"], "limit": u["limit"],
                        "percent": u["percent"], "session_id": None})
        return out

    # -- providers ------------------------------------------------------------------------------
    def providers(self) -> dict[str, Any]:
        """The configured external provider, its status and settings (secrets masked), and every
        provider found. ``{"configured": name|None, "status": {...}, "settings": {...}, "fields":
        [...], "env": {VAR: masked}, "available": [ProviderInfo dicts], "model": {...masked}}``."""
        from hermes_memory.config import provider_section, read_env_file
        from hermes_memory.providers.discovery import discover_memory_providers

        problem = self.provider_problem
        name = (problem.name if problem else self.config.memory.provider.strip()) or None
        provider = self.server.provider
        try:
            infos = [i.as_dict() for i in discover_memory_providers(self.home.root)]
        except Exception as exc:  # discovery imports plugin code
            logger.exception("provider discovery failed")
            infos = [{"name": "?", "description": f"discovery failed: {type(exc).__name__}: {exc}",
                      "available": False, "reason": str(exc), "source": "", "location": ""}]
        status: dict[str, Any] = {"loaded": provider is not None, "name": getattr(provider, "name", name)}
        if problem is not None:
            status["error"] = problem.error
        fields: list[dict[str, Any]] = []
        secret_keys: set[str] = set()
        env_vars: set[str] = set()
        if provider is not None:
            try:
                status["available"] = bool(provider.is_available())
            except Exception as exc:  # plugin code
                status["available"] = False
                status["error"] = f"{type(exc).__name__}: {exc}"
            try:
                schema = list(provider.get_config_schema() or [])
            except Exception:
                schema = []
            for fld in schema:
                d = fld.as_dict() if hasattr(fld, "as_dict") else dict(fld)
                if d.get("secret"):
                    d.pop("default", None)
                fields.append(d)
                if d.get("secret"):
                    secret_keys.add(str(d.get("key")))
                if d.get("env_var"):
                    env_vars.add(str(d["env_var"]))
        settings = masked_settings(provider_section(self.home.root, name), secret_keys) if name else {}
        env_file = read_env_file(self.home.env_path)
        env_shown = {}
        for var in sorted(set(env_file) | env_vars):
            value = env_file.get(var) or _environ(var)
            env_shown[var] = mask(value)  # .env is where secrets live: every value is masked
        model = self.config.model.model_dump(mode="json")
        model = masked_settings(model, {"api_key"})
        return {"configured": name, "status": status, "settings": settings, "fields": fields, "env": env_shown,
                "available": infos, "model": model, "config_path": str(self.home.config_path),
                "env_path": str(self.home.env_path)}


def _environ(name: str) -> str:
    import os

    return os.environ.get(name, "")


# --------------------------------------------------------------------------------------------
# session filters
# --------------------------------------------------------------------------------------------


@dataclass
class SessionFilter:
    """Filters of the session list; empty strings mean "any".

    ``since``/``until``: ``YYYY-MM-DD`` (UTC days, both inclusive). ``title``: a case-insensitive
    substring of the title. ``project``: a working directory; sessions in it or below it match
    (only where ``state.db`` records ``cwd``).
    """

    source: str = ""
    user: str = ""
    since: str = ""
    until: str = ""
    project: str = ""
    title: str = ""
    errors: list[str] = field(default_factory=list)

    @classmethod
    def from_query(cls, q: Any) -> SessionFilter:
        """Build from query parameters (a mapping); bad dates are dropped and named in ``errors``."""
        def param(key: str) -> str:
            return str(q.get(key, "") or "").strip()[:500]

        f = cls(source=param("source"), user=param("user"), since=param("since"), until=param("until"),
                project=param("project"), title=param("title"))
        for name in ("since", "until"):
            value = getattr(f, name)
            if value and _day_start(value) is None:
                f.errors.append(f"{name}: {value!r} is not a date (use YYYY-MM-DD)")
                setattr(f, name, "")
        return f

    def as_dict(self) -> dict[str, str]:
        return {"source": self.source, "user": self.user, "since": self.since, "until": self.until,
                "project": self.project, "title": self.title}

    def query(self, *, has_cwd: bool) -> SessionQuery | None:
        """These filters as a :class:`~hermes_memory.sessions.browse.SessionQuery`; ``None`` when a
        project is asked for and the database records none (``has_cwd`` false): nothing matches."""
        if self.project and not has_cwd:
            return None
        since = _day_start(self.since) if self.since else None
        until = _day_start(self.until) if self.until else None
        return SessionQuery(source=self.source or None, user_id=self.user or None, started_from=since,
                            started_before=until + 86400.0 if until is not None else None,
                            title_contains=self.title or None, cwd_prefix=self.project or None)


def _day_start(text: str) -> float | None:
    try:
        d = date.fromisoformat(text)
    except ValueError:
        return None
    return datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp()
