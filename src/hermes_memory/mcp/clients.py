"""Ready-to-paste client configuration for the memory server (Claude Code, Cursor, Codex CLI,
Claude Desktop).

Pure functions: they build text, the CLI prints it. Secrets are never written into the snippets;
when the server needs a bearer token, the snippets read it from the environment variable
:data:`TOKEN_ENV` on the client side (each client's own mechanism for that is used: shell
expansion for ``claude mcp add``, ``${env:NAME}`` in Cursor's ``mcp.json``,
``bearer_token_env_var`` in Codex's ``config.toml``).

Claude Desktop's ``claude_desktop_config.json`` launches local servers over stdio only (remote
servers are added in its Connectors settings), so its snippet starts ``hermes-memory serve
--transport stdio`` on the same home; that is safe beside a running HTTP server because every
memory write takes the store's file lock and every session write is a SQLite transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

SERVER_KEY = "hermes-memory"
"""Name under which the server is registered in every client."""

TOKEN_ENV = "HERMES_MCP_TOKEN"
"""Environment variable holding the bearer token (read by ``serve`` and by the client snippets)."""


@dataclass(frozen=True)
class ClientSnippet:
    """One client's configuration: where it goes (``where``) and the text to paste (``text``)."""

    client: str
    where: str
    text: str

    def as_dict(self) -> dict[str, str]:
        return {"client": self.client, "where": self.where, "text": self.text}


def _shell_quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def claude_code(url: str, *, token: bool) -> ClientSnippet:
    """``claude mcp add`` for the streamable HTTP endpoint (user scope: every project sees it)."""
    cmd = f"claude mcp add --scope user --transport http {SERVER_KEY} {_shell_quote(url)}"
    if token:
        cmd += f' --header "Authorization: Bearer ${TOKEN_ENV}"'
    return ClientSnippet("Claude Code", "run in a shell", cmd)


def cursor(url: str, *, token: bool) -> ClientSnippet:
    """Entry for ``~/.cursor/mcp.json`` (or a project's ``.cursor/mcp.json``)."""
    entry: dict[str, object] = {"url": url}
    if token:
        entry["headers"] = {"Authorization": f"Bearer ${{env:{TOKEN_ENV}}}"}
    text = json.dumps({"mcpServers": {SERVER_KEY: entry}}, indent=2)
    return ClientSnippet("Cursor", "~/.cursor/mcp.json", text)


def codex(url: str, *, token: bool) -> ClientSnippet:
    """Table for ``~/.codex/config.toml`` (Codex CLI, streamable HTTP)."""
    lines = [f"[mcp_servers.{SERVER_KEY}]", f"url = {json.dumps(url)}"]
    if token:
        lines.append(f'bearer_token_env_var = "{TOKEN_ENV}"')
    return ClientSnippet("Codex CLI", "~/.codex/config.toml", "\n".join(lines))


def claude_desktop(stdio_command: list[str]) -> ClientSnippet:
    """Entry for ``claude_desktop_config.json``: Claude Desktop starts the server itself over stdio."""
    command, *args = stdio_command
    text = json.dumps({"mcpServers": {SERVER_KEY: {"command": command, "args": args}}}, indent=2)
    return ClientSnippet(
        "Claude Desktop",
        "claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, "
        "Windows: %APPDATA%\\Claude\\)",
        text,
    )


def all_snippets(url: str, *, token: bool, stdio_command: list[str]) -> list[ClientSnippet]:
    """The four snippets, in the order they are printed.

    ``url`` is the streamable HTTP endpoint (``http://127.0.0.1:8765/mcp``); ``token`` says whether
    the server requires a bearer token; ``stdio_command`` is the full argv that starts this server
    over stdio on the same home (absolute paths, since desktop apps do not inherit a shell's PATH).
    """
    return [
        claude_code(url, token=token),
        cursor(url, token=token),
        codex(url, token=token),
        claude_desktop(stdio_command),
    ]
