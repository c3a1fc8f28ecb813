"""The ``MemoryProvider`` ABC: the contract every external memory provider implements.

Behaviour follows the reference design (docs/reference.md §2). Four members are required:
:attr:`name`, :meth:`is_available`, :meth:`initialize` and :meth:`get_tool_schemas`; every other
hook has a harmless default, so a provider implements only what it needs.

Rules every provider follows:

* ``is_available()`` checks configuration and installed dependencies only, never the network.
* ``initialize(session_id, **kwargs)`` always receives ``hermes_home`` (str path), ``platform``
  (e.g. ``"cli"``, ``"mcp"``) and ``agent_context`` (``"primary"``, ``"subagent"``, ``"cron"``,
  ``"flush"``); it may also receive ``user_id``, ``parent_session_id``, ``agent_identity`` and
  ``agent_workspace``. Providers must not write anything unless ``agent_context == "primary"``
  (see :meth:`MemoryProvider.writes_allowed`).
* ``prefetch`` must be fast (serve from a cache filled by ``queue_prefetch``); ``sync_turn`` must
  not block (the manager already runs it on a background worker).
* Tool schemas are bare OpenAI function objects: ``{"name", "description", "parameters"}``.
* ``handle_tool_call`` returns a JSON string (the tool result shown to the model). Errors are
  returned as ``{"error": "..."}`` JSON, not raised, where the provider can say what went wrong.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from hermes_memory.errors import ToolArgumentError  # noqa: F401 - re-exported

PRIMARY_CONTEXT = "primary"
"""``agent_context`` value of the main, user-facing agent: the only context allowed to write."""


@dataclass(frozen=True)
class ConfigField:
    """One field of a provider's configuration, as shown by the setup wizard.

    ``secret`` fields are written to ``$HERMES_HOME/.env`` under ``env_var`` (mode 0600); the rest go
    to ``config.yaml``. ``choices`` makes the wizard offer a selector. ``type`` is one of
    ``"str"``, ``"int"``, ``"float"``, ``"bool"``. ``min`` / ``max`` bound an ``int`` or ``float``
    (inclusive; ``None`` = unbounded); the wizard and ``memory status`` refuse values outside them.

    ``required_when = (other_key, values)`` makes the field required only while the setting
    ``other_key`` has one of ``values`` (compared as strings; ``""`` = blank), e.g. an API key
    needed in ``mode: platform`` only. On a non-secret field, ``env_var`` names the environment
    variable the provider falls back to when the setting is blank (the wizard counts it as set).
    The wizard refuses (exit 2, nothing written) when a required field ends up without a value.
    """

    key: str
    description: str
    secret: bool = False
    required: bool = False
    default: Any = None
    choices: tuple[Any, ...] | None = None
    type: str = "str"
    env_var: str | None = None
    url: str | None = None
    min: float | None = None
    max: float | None = None
    required_when: tuple[str, tuple[Any, ...]] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items() if v is not None}


@dataclass
class ProviderContext:
    """What ``initialize`` received, kept by :class:`MemoryProvider` for its hooks."""

    session_id: str = ""
    hermes_home: str = ""
    platform: str = ""
    agent_context: str = PRIMARY_CONTEXT
    extra: dict[str, Any] = field(default_factory=dict)


class MemoryProvider(ABC):
    """Base class for an external memory provider (one active at a time, beside the built-in one)."""

    # -- required ---------------------------------------------------------------------------
    @property
    @abstractmethod
    def name(self) -> str:
        """Short unique name (``"holographic"``, ``"mem0"``...), used in ``memory.provider``."""

    @abstractmethod
    def is_available(self) -> bool:
        """True when configuration and dependencies are present. Must not touch the network."""

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare for ``session_id``. ``kwargs`` always has ``hermes_home``, ``platform``, ``agent_context``."""

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Tool schemas this provider exposes: ``[{"name", "description", "parameters"}]``."""

    # -- optional, with defaults ---------------------------------------------------------------
    def initialize_for_inspection(self, **kwargs: Any) -> None:
        """Initialise for read-only inspection (``memory status``); defaults to :meth:`initialize`."""
        self.initialize("", **kwargs)

    def unavailable_reason(self) -> str:
        """Why :meth:`is_available` is False, in one line saying how to fix it (``""`` when available)."""
        return ""

    def system_prompt_block(self) -> str:
        """Static text for the system prompt (built once per session). Default ``""``."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recalled context for ``query`` (fast; cached). ``""`` when nothing is relevant."""
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start recalling for the next turn in the background. Default: no-op."""

    def recall_status(self) -> dict[str, Any] | None:
        """Diagnostics of the last recall (``None`` when the provider keeps none)."""
        return None

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Store a finished turn. Called on the manager's background worker. Default: no-op."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of this provider's tools; return the JSON result string."""
        raise NotImplementedError(f"provider {self.name!r} has no tool {tool_name!r}")

    def shutdown(self) -> None:
        """Release resources (flush queues, close clients). Default: no-op."""

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """Called at the start of each user turn. Default: no-op."""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Called at a real session boundary (exit, ``/new``) with the whole history. Default: no-op."""

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        """The agent moved to ``new_session_id`` (compression child, ``/new``, resume). Default: no-op."""

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Called before compression with the full history; returned text goes into the summary prompt."""
        return ""

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        """Mirror of a successful built-in ``memory`` write (external providers only). Default: no-op."""

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any) -> None:
        """A subagent finished ``task`` with ``result``. Default: no-op."""

    def get_config_schema(self) -> list[ConfigField]:
        """Fields for the setup wizard. Default: none."""
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        """Persist non-secret values the wizard collected (beyond ``config.yaml``). Default: no-op."""

    def backup_paths(self) -> list[str]:
        """Files a backup of the home should include. Default: none."""
        return []

    # -- helpers for subclasses ----------------------------------------------------------------
    @staticmethod
    def writes_allowed(agent_context: str | None) -> bool:
        """True only for the primary agent context; subagents, cron and flush forks never write."""
        return (agent_context or PRIMARY_CONTEXT) == PRIMARY_CONTEXT

    @staticmethod
    def tool_error(message: str, **extra: Any) -> str:
        """JSON error result for a tool call: ``{"error": message, ...extra}``."""
        return json.dumps({"error": message, **extra}, ensure_ascii=False)

    @staticmethod
    def tool_result(payload: Any) -> str:
        """JSON success result for a tool call."""
        return json.dumps(payload, ensure_ascii=False, default=str)


def non_ascii_problem(name: str, value: str | None) -> str:
    """``""`` when ``value`` is empty or plain ASCII; else a message naming ``name`` (a setting or
    environment variable) and the offending characters, e.g. curly quotes “ ” pasted with a key.

    API keys travel in HTTP headers, which carry ASCII only: such a key would make every call fail
    with "'ascii' codec can't encode". The message never contains the value itself.
    """
    if not value or value.isascii():
        return ""
    bad = list(dict.fromkeys(ch for ch in value if not ch.isascii()))
    shown = ", ".join(f"{ch} (U+{ord(ch):04X})" for ch in bad[:5]) + (", ..." if len(bad) > 5 else "")
    return (f"{name} contains non-ASCII characters ({shown}), such as curly quotes \u201c \u201d pasted "
            "with the key; API keys are plain ASCII: enter the key again without them")


def number_arg(args: dict[str, Any], key: str, default: float, kind: type = int) -> Any:
    """``args[key]`` as ``kind`` (``int`` or ``float``); ``default`` when missing, ``None`` or ``""``.

    Accepts numbers and numeric strings (models often send ``"5"``). Raises
    :class:`ToolArgumentError` naming ``key`` for anything else (``"many"``, a list, a dict), so a
    tool can answer ``{"error": ...}`` instead of failing with ``int()``'s message.
    """
    value = args.get(key)
    if value is None or value == "":
        return default
    try:
        if isinstance(value, (dict, list, tuple, set)):
            raise TypeError
        number = float(value)
        if kind is int:
            if not number.is_integer():
                raise ValueError
            return int(number)
        return number
    except (TypeError, ValueError, OverflowError):
        what = "a whole number" if kind is int else "a number"
        raise ToolArgumentError(f"{key} must be {what}; got {value!r}"[:300]) from None


def path_segment(value: Any) -> str:
    """``value`` percent-encoded as exactly one URL path segment, for ids interpolated into a route.

    ``/``, ``?``, ``#`` and ``%`` are escaped, so an id from the model or the platform
    (``"../memories?user_id=x"``) cannot climb to another route or add query parameters; the dots of
    ``"."`` and ``".."`` (segments HTTP clients collapse) are escaped too. Never raises, so hooks can use it.
    """
    text = str(value)
    if text in (".", ".."):
        return "%2E" * len(text)
    return quote(text, safe="")


_TRIVIAL = {
    "yes", "no", "ok", "okay", "sure", "thanks", "thank you", "y", "n", "yep", "nope", "yeah", "nah",
    "hi", "hey", "hello", "yo", "sup", "continue", "go ahead", "do it", "proceed", "got it", "cool",
    "nice", "great", "done", "next", "lgtm", "k",
}
_PUNCT_TAIL = re.compile(r"[\s.!?,;:…]+$")


def is_trivial_prompt(text: str | None) -> bool:
    """True for prompts not worth a recall: empty, a ``/command``, or a bare ack/greeting.

    The list of acks follows the reference (docs/reference.md §2); trailing punctuation is
    ignored, so ``"ok!"`` is trivial while ``"k8s"`` is not.
    """
    if text is None:
        return True
    stripped = text.strip()
    if not stripped or stripped.startswith("/"):
        return True
    return _PUNCT_TAIL.sub("", stripped.lower()) in _TRIVIAL


def sdk_problem(dist: str, major: int) -> str:
    """Why the installed ``dist`` SDK cannot be used by a provider written for its major version
    ``major`` (not installed, or another major version, whose API differs); ``""`` when it fits.

    Reads installed package metadata only (no import, no network), so ``is_available`` stays cheap.
    """
    import importlib.metadata

    try:
        version = importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return f"the {dist} package is not installed: pip install 'hermes-memory[providers]'"
    head = version.split(".")[0]
    if not head.isdigit() or int(head) != major:
        return f"{dist} {version} is installed but this provider needs {dist} {major}.x: pip install '{dist}>={major},<{major + 1}'"
    return ""
