"""The clients whose hooks we install: where their settings live and which events do what.

Both clients read hooks from a ``settings.json`` shaped ``{"hooks": {EVENT: [{"matcher"?, "hooks":
[{"type": "command", "command", "timeout"}]}]}}``, send one JSON object on the hook's stdin
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and per-event fields) and read
``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`` from its stdout on exit 0.

Claude Code (its hooks reference, code.claude.com/docs/en/hooks): settings in
``$CLAUDE_CONFIG_DIR`` or ``~/.claude`` (user) and ``.claude/`` of the project; ``timeout`` in
seconds. Gemini CLI (geminicli.com/docs/hooks/reference): settings in ``~/.gemini`` (user) and
``.gemini/`` of the project; ``timeout`` in milliseconds; ``BeforeAgent`` is its prompt event
and ``AfterAgent`` carries the turn (``prompt``, ``prompt_response``). Gemini CLI's settings may
hold ``//`` and ``/* */`` comments (no trailing commas, no byte-order mark: it hands the text with
comments blanked to ``JSON.parse``); Claude Code's must be plain JSON.

Actions: ``snapshot`` (context for the session), ``recall`` (context for one prompt), ``import``
(read the transcript into state.db), ``end`` (import, then end the session), ``record`` (store the
turn given in the payload).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SCOPES = ("user", "project", "local")
"""``user``: the user's settings; ``project``: the project's shared settings; ``local``: the
project's uncommitted settings (Claude Code's ``settings.local.json``)."""


@dataclass(frozen=True)
class ClientSpec:
    """One client. ``events`` maps its hook event names to our actions (in install order);
    ``timeouts`` are seconds per event, written in the client's ``timeout_unit`` (1 = s, 1000 = ms)."""

    name: str
    title: str
    events: tuple[tuple[str, str], ...]
    timeouts: dict[str, float]
    timeout_unit: int
    user_dir: str
    user_dir_env: str | None
    project_dir: str
    local_settings: str | None
    session_prefix: str
    source: str
    transcript_kind: str | None
    settings_comments: bool = False
    """Whether the client reads ``//`` and ``/* */`` comments in its settings file (Gemini CLI
    strips them before ``JSON.parse``; Claude Code rejects a file that has any)."""
    context_tag: str | None = None
    """Tag the client wraps hook-added context in when it hands the prompt back to later hooks
    (Gemini CLI: ``<hook_context>``); removed before a prompt is searched or recorded."""

    def action(self, event: str) -> str | None:
        """Our action for ``event`` (``None`` for an event we do not handle)."""
        return dict(self.events).get(event)

    def config_dir(self) -> Path:
        """The user-level folder of the client (``$CLAUDE_CONFIG_DIR`` honoured for Claude Code)."""
        env = os.environ.get(self.user_dir_env) if self.user_dir_env else None
        return Path(env).expanduser() if env else Path(self.user_dir).expanduser()

    def settings_path(self, scope: str = "user", project: str | os.PathLike[str] | None = None) -> Path:
        """The settings file for ``scope`` (one of :data:`SCOPES`); ``project`` defaults to the cwd.
        Raises ``ValueError`` for an unknown scope or one the client lacks."""
        if scope == "user":
            return self.config_dir() / "settings.json"
        base = Path(project or os.getcwd()).expanduser().resolve() / self.project_dir
        if scope == "project":
            return base / "settings.json"
        if scope == "local" and self.local_settings:
            return base / self.local_settings
        raise ValueError(f"{self.title} has no {scope!r} settings scope; use one of: "
                         f"{', '.join(s for s in SCOPES if s != 'local' or self.local_settings)}.")

    def session_id(self, client_session_id: str) -> str:
        """Our state.db session id for the client's session id."""
        return f"{self.session_prefix}{client_session_id}"


CLAUDE_CODE = ClientSpec(
    name="claude-code",
    title="Claude Code",
    events=(("SessionStart", "snapshot"), ("UserPromptSubmit", "recall"), ("PreCompact", "import"),
            ("Stop", "import"), ("SessionEnd", "end")),
    timeouts={"SessionStart": 15, "UserPromptSubmit": 10, "PreCompact": 60, "Stop": 30, "SessionEnd": 30},
    timeout_unit=1,
    user_dir="~/.claude",
    user_dir_env="CLAUDE_CONFIG_DIR",
    project_dir=".claude",
    local_settings="settings.local.json",
    session_prefix="cc-",  # the Claude Code importer's ids, so hooks and `sessions import` meet
    source="claude_code",
    transcript_kind="claude_code",
)

GEMINI_CLI = ClientSpec(
    name="gemini-cli",
    title="Gemini CLI",
    events=(("SessionStart", "snapshot"), ("BeforeAgent", "recall"), ("AfterAgent", "record"),
            ("SessionEnd", "end")),
    timeouts={"SessionStart": 15, "BeforeAgent": 10, "AfterAgent": 30, "SessionEnd": 30},
    timeout_unit=1000,
    user_dir="~/.gemini",
    user_dir_env=None,
    project_dir=".gemini",
    local_settings=None,
    session_prefix="gemini-",
    source="gemini_cli",
    transcript_kind=None,  # its transcript is recorded turn by turn from AfterAgent
    settings_comments=True,  # its settings loader: JSON.parse(stripJsonComments(text)), 0.61.0
    context_tag="hook_context",  # measured with Gemini CLI 0.61: SessionStart context prefixes the prompt
)

CLIENTS: dict[str, ClientSpec] = {c.name: c for c in (CLAUDE_CODE, GEMINI_CLI)}


def get_client(name: str) -> ClientSpec:
    """The :class:`ClientSpec` called ``name``; ``ValueError`` naming the known ones otherwise."""
    try:
        return CLIENTS[name]
    except KeyError:
        raise ValueError(f"unknown client {name!r}; use one of: {', '.join(CLIENTS)}.") from None
