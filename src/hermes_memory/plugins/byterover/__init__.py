"""ByteRover memory provider: a local, Markdown "context tree" curated and queried through the ``brv`` CLI.

Behaviour follows the reference plugin (docs/providers.md §7). Every call runs ``brv`` as a subprocess with
an argument list (never a shell), a timeout in seconds, and the working directory
``$HERMES_HOME/byterover/`` (the context tree lives in its ``.brv/context-tree/``). Free text is passed
after ``--`` so it can never be read as an option.

Tools (3): ``brv_query(query)`` (query cut to 5000 chars, answer cut to 8000 chars),
``brv_curate(content)``, ``brv_status()``. Errors come back as ``{"error": ...}`` JSON.

Hooks: ``prefetch`` runs a synchronous query for prompts of 10 chars or more (``## ByteRover Context``);
``sync_turn`` curates ``User: …\\nAssistant: …`` (2000 chars each) for user messages of 10 chars or more;
``on_memory_write`` curates built-in ``add``/``replace`` writes; ``on_pre_compress`` curates the last 10
user/assistant messages (500 chars each) and returns ``""``. Automatic curation is gated by
``auto_extract`` and happens only in the primary agent context. No hook ever raises.

Configuration (``config.yaml`` section ``byterover:`` as the setup wizard writes it, or ``memory.byterover:`` as
the reference agent does; the environment wins):

* ``brv_path`` / ``BRV_PATH``: the executable; default ``brv`` on ``PATH``, then the install locations
  the reference checks (``~/.brv-cli/bin/brv``, ``/usr/local/bin/brv``, ``~/.npm-global/bin/brv``).
* ``auto_extract`` (default true), ``timeout_query`` (10 s), ``timeout_curate`` (120 s),
  ``timeout_status`` (15 s).
* ``BRV_API_KEY`` (secret, optional: cloud sync only) is passed to ``brv`` in its environment.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

from hermes_memory.config import provider_section, read_env_file
from hermes_memory.errors import ProviderError
from hermes_memory.home import resolve_home
from hermes_memory.providers.base import ConfigField, MemoryProvider, is_trivial_prompt

log = logging.getLogger(__name__)

NAME = "byterover"
QUERY_MAX_CHARS = 5000          # query text sent to brv (reference: query[:5000])
OUTPUT_MAX_CHARS = 8000         # answer returned to the model (reference)
MIN_OUTPUT_CHARS = 20           # shorter answers mean "nothing found" (reference)
MIN_PREFETCH_CHARS = 10         # prompts shorter than this are not worth a query (reference)
MIN_SYNC_CHARS = 10             # user messages shorter than this are not curated (reference)
TURN_PART_CHARS = 2000          # each side of a curated turn (reference)
PRECOMPRESS_MESSAGES = 10       # messages curated before a compression (reference)
PRECOMPRESS_PART_CHARS = 500    # chars per message curated before a compression (reference)
NO_MEMORIES = "No relevant memories found"
SHUTDOWN_WAIT_S = 10.0          # shutdown waits this long for a running curate (reference)
_FALLBACK_PATHS = ("~/.brv-cli/bin/brv", "/usr/local/bin/brv", "~/.npm-global/bin/brv")
_DEFAULTS: dict[str, Any] = {
    "brv_path": "",
    "auto_extract": True,
    "timeout_query": 10.0,
    "timeout_curate": 120.0,
    "timeout_status": 15.0,
}
_ENV = {"brv_path": "BRV_PATH"}


class BrvError(ProviderError):
    """``brv`` could not be run, timed out or exited non-zero; the message says which and how to fix it."""


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


def _load_settings(home: Path) -> dict[str, Any]:
    """Defaults < ``config.yaml`` (``byterover:``, then ``memory.byterover:``) < ``$HERMES_HOME/.env`` < environment."""
    settings = dict(_DEFAULTS)
    section = provider_section(home, NAME)
    if section:
        settings.update({k: v for k, v in section.items() if v is not None})
    env_file = read_env_file(home / ".env")
    for key, var in _ENV.items():
        value = os.environ.get(var) or env_file.get(var)
        if value:
            settings[key] = value
    api_key = os.environ.get("BRV_API_KEY") or env_file.get("BRV_API_KEY") or ""
    settings["api_key"] = api_key
    settings["auto_extract"] = _as_bool(settings["auto_extract"])
    for key in ("timeout_query", "timeout_curate", "timeout_status"):
        try:
            settings[key] = float(settings[key])
        except (TypeError, ValueError):
            log.warning("byterover: memory.byterover.%s=%r is not a number; using %s", key, settings[key], _DEFAULTS[key])
            settings[key] = float(_DEFAULTS[key])
    return settings


def find_brv(configured: str = "") -> str | None:
    """Absolute path of the ``brv`` executable, or ``None``. No network, no subprocess.

    ``configured`` (a path or a bare name) wins; otherwise ``PATH``, then the reference's install places.
    """
    if configured:
        found = shutil.which(os.path.expanduser(configured))
        return found
    found = shutil.which("brv")
    if found:
        return found
    for candidate in _FALLBACK_PATHS:
        path = os.path.expanduser(candidate)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


class ByteRoverProvider(MemoryProvider):
    """External memory through the ``brv`` CLI (see the module docstring for tools, hooks and config)."""

    def __init__(self, hermes_home: str | os.PathLike[str] | None = None) -> None:
        self._home: Path | None = Path(hermes_home) if hermes_home else None
        self._settings: dict[str, Any] = dict(_DEFAULTS)
        self._session_id = ""
        self._agent_context = "primary"
        self._last_error = ""
        self._lock = threading.Lock()

    # -- identity and availability -------------------------------------------------------------
    @property
    def name(self) -> str:
        return NAME

    def _resolve(self) -> tuple[Path, dict[str, Any]]:
        home = self._home or resolve_home()
        return home, _load_settings(home)

    def is_available(self) -> bool:
        """True when ``brv`` is found (configured path, ``PATH`` or a known install place). No network."""
        try:
            _, settings = self._resolve()
        except Exception:  # a broken home must not break `providers list`
            return False
        return find_brv(settings["brv_path"]) is not None

    def unavailable_reason(self) -> str:
        if self.is_available():
            return ""
        return ("the ByteRover CLI `brv` was not found: install it with `npm install -g byterover-cli` "
                "or set memory.byterover.brv_path (or BRV_PATH) to the executable")

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Resolve settings and create the working directory ``$HERMES_HOME/byterover/``."""
        home = kwargs.get("hermes_home")
        self._home = Path(home) if home else resolve_home()
        self._settings = _load_settings(self._home)
        self._session_id = session_id
        self._agent_context = kwargs.get("agent_context") or "primary"
        try:
            self.workdir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._last_error = f"cannot create {self.workdir}: {exc}"
            log.warning("byterover: %s", self._last_error)

    @property
    def workdir(self) -> Path:
        """``$HERMES_HOME/byterover``: brv's working directory (its ``.brv/`` context tree lives here)."""
        return (self._home or resolve_home()) / "byterover"

    def _writes_ok(self) -> bool:
        return self.writes_allowed(self._agent_context)

    # -- the subprocess --------------------------------------------------------------------------
    def _run(self, args: list[str], timeout: float) -> str:
        """Run ``brv *args`` (no shell) in the working directory; return stdout stripped.

        Raises :class:`BrvError` when the executable is missing, the call exceeds ``timeout`` seconds,
        or it exits non-zero (the message carries brv's stderr).
        """
        exe = find_brv(self._settings.get("brv_path", ""))
        if exe is None:
            raise BrvError("brv not found: install `byterover-cli` or set memory.byterover.brv_path")
        env = dict(os.environ)
        if self._settings.get("api_key"):
            env["BRV_API_KEY"] = self._settings["api_key"]
        workdir = self.workdir
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run(  # noqa: S603 - argument list, no shell
                [exe, *args], cwd=workdir, env=env, capture_output=True, text=True,
                timeout=timeout, stdin=subprocess.DEVNULL, check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise BrvError(f"brv {args[0]} timed out after {timeout:g} s; raise memory.byterover."
                           f"timeout_{args[0]} if the backend is slow") from exc
        except OSError as exc:
            raise BrvError(f"cannot run {exe}: {exc}") from exc
        except ValueError as exc:  # subprocess refuses an argument with a NUL byte ("embedded null byte")
            raise BrvError(f"brv {args[0]} refused: {exc}; remove NUL characters from the text") from exc
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout or "").strip()[:500]
            raise BrvError(f"brv {args[0]} failed (exit {proc.returncode}): {detail or 'no output'}")
        return (proc.stdout or "").strip()

    def _query(self, query: str) -> str:
        out = self._run(["query", "--", query[:QUERY_MAX_CHARS]], self._settings["timeout_query"])
        if len(out) < MIN_OUTPUT_CHARS:
            return ""
        return out[:OUTPUT_MAX_CHARS]

    def _curate(self, content: str) -> None:
        self._run(["curate", "--", content], self._settings["timeout_curate"])

    def _curate_quietly(self, content: str, what: str) -> None:
        """Curate in a hook: failures are logged and kept for ``recall_status``, never raised."""
        try:
            self._curate(content)
        except BrvError as exc:
            self._last_error = str(exc)
            log.warning("byterover: %s curate failed: %s", what, exc)

    # -- tools ------------------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "brv_query",
                "description": ("Search the ByteRover context tree (long-term project and user knowledge) "
                                "and get a synthesised answer with the relevant notes."),
                "parameters": {"type": "object", "properties": {
                    "query": {"type": "string", "description": "What to look up, as a question or keywords."},
                }, "required": ["query"]},
            },
            {
                "name": "brv_curate",
                "description": ("Store knowledge worth keeping across sessions (decisions, facts, preferences, "
                                "how-tos) in the ByteRover context tree."),
                "parameters": {"type": "object", "properties": {
                    "content": {"type": "string", "description": "The knowledge to store, self-contained."},
                }, "required": ["content"]},
            },
            {
                "name": "brv_status",
                "description": "Show ByteRover's status (context tree location, daemon, sync).",
                "parameters": {"type": "object", "properties": {}, "required": []},
            },
        ]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a ``brv_*`` tool; returns JSON. Every failure is ``{"error": ...}``, never an exception."""
        args = args or {}
        try:
            if tool_name == "brv_query":
                query = str(args.get("query") or "").strip()
                if not query:
                    return self.tool_error("brv_query needs a non-empty 'query'")
                answer = self._query(query)
                return self.tool_result({"result": answer or NO_MEMORIES})
            if tool_name == "brv_curate":
                content = str(args.get("content") or "").strip()
                if not content:
                    return self.tool_error("brv_curate needs a non-empty 'content'")
                if not self._writes_ok():
                    return self.tool_error(f"brv_curate is disabled in the {self._agent_context!r} agent context; "
                                           "only the primary agent writes memory")
                self._curate(content)
                return self.tool_result({"result": "Memory curated successfully."})
            if tool_name == "brv_status":
                return self.tool_result({"status": self._run(["status"], self._settings["timeout_status"])})
        except BrvError as exc:
            self._last_error = str(exc)
            return self.tool_error(str(exc))
        return self.tool_error(f"unknown ByteRover tool {tool_name!r}; use brv_query, brv_curate or brv_status")

    # -- hooks --------------------------------------------------------------------------------------
    def system_prompt_block(self) -> str:
        if find_brv(self._settings.get("brv_path", "")) is None:
            return ""
        return ("# ByteRover memory\nA ByteRover context tree holds long-term knowledge. Use brv_query to look "
                "things up before answering from scratch and brv_curate to store durable knowledge "
                "(decisions, facts, preferences).")

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Synchronous ``brv query`` for prompts of 10+ chars; ``""`` on a miss, a trivial prompt or a failure."""
        if is_trivial_prompt(query) or len(query.strip()) < MIN_PREFETCH_CHARS:
            return ""
        try:
            answer = self._query(query.strip())
        except BrvError as exc:
            self._last_error = str(exc)
            log.warning("byterover: prefetch failed: %s", exc)
            return ""
        self._last_error = ""
        return f"## ByteRover Context\n{answer}" if answer else ""

    def recall_status(self) -> dict[str, Any] | None:
        return {"provider": NAME, "ok": not self._last_error, "error": self._last_error or None}

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Curate the finished turn (runs on the manager's background worker; bounded by ``timeout_curate``)."""
        if not (self._writes_ok() and self._settings["auto_extract"]):
            return
        if len((user_content or "").strip()) < MIN_SYNC_CHARS:
            return
        text = (f"User: {user_content[:TURN_PART_CHARS]}\n"
                f"Assistant: {(assistant_content or '')[:TURN_PART_CHARS]}")
        with self._lock:
            self._curate_quietly(text, "turn")

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        """Mirror a built-in ``add``/``replace`` as a curate (``[User profile]`` or ``[Agent memory]``)."""
        if action not in ("add", "replace") or not content or not self._writes_ok():
            return
        if not self._settings["auto_extract"]:
            return
        label = "[User profile]" if target == "user" else "[Agent memory]"
        with self._lock:
            self._curate_quietly(f"{label} {content}", "memory-write")

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Curate the last 10 user/assistant messages before they are summarised away; returns ``""``."""
        if not (self._writes_ok() and self._settings["auto_extract"]):
            return ""
        picked: list[str] = []
        for msg in reversed(messages or []):
            if not isinstance(msg, dict):
                continue
            role = msg.get("role")
            content = msg.get("content")
            if role not in ("user", "assistant") or not isinstance(content, str) or not content.strip():
                continue
            if role == "user" and content.lstrip().startswith("/"):
                continue  # a bare skill/slash invocation carries no knowledge
            picked.append(f"{role}: {content.strip()[:PRECOMPRESS_PART_CHARS]}")
            if len(picked) >= PRECOMPRESS_MESSAGES:
                break
        if picked:
            text = "[Pre-compression context]\n" + "\n".join(reversed(picked))
            with self._lock:
                self._curate_quietly(text, "pre-compress")
        return ""

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        """ByteRover's tree is per home, not per session: only the id used in logs changes."""
        if new_session_id:
            self._session_id = new_session_id

    def shutdown(self) -> None:
        """Wait for a curate still running in another thread (it holds the lock), at most 10 s (reference)."""
        if self._lock.acquire(timeout=min(SHUTDOWN_WAIT_S, self._settings["timeout_curate"])):
            self._lock.release()

    # -- setup wizard -----------------------------------------------------------------------------------
    def get_config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("brv_path", "Path to the brv executable (empty: find it on PATH)", default=""),
            ConfigField("auto_extract", "Curate turns, memory writes and pre-compression context automatically",
                        default=True, type="bool"),
            ConfigField("timeout_query", "Seconds before a brv query is abandoned", default=10.0, type="float"),
            ConfigField("timeout_curate", "Seconds before a brv curate is abandoned", default=120.0, type="float"),
            ConfigField("api_key", "ByteRover API key (only for cloud sync)", secret=True, env_var="BRV_API_KEY",
                        url="https://www.byterover.dev"),
        ]


    def backup_paths(self) -> list[str]:
        """The context tree (``$HERMES_HOME/byterover/.brv``)."""
        return [str(self.workdir / ".brv")]

def register(ctx: Any) -> None:
    """Plugin entry point (uses ``ctx.hermes_home`` when the loader provides one): hand one :class:`ByteRoverProvider` to the discovery collector."""
    ctx.register_memory_provider(ByteRoverProvider(hermes_home=getattr(ctx, "hermes_home", None)))


__all__ = ["ByteRoverProvider", "BrvError", "find_brv", "register"]
