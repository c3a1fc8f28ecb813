"""The viking_* tools of the OpenViking provider: their schemas, dispatch and handlers (search, read, browse, remember, forget, add a resource)."""

from __future__ import annotations

import mimetypes
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from hermes_memory.home import resolve_home
from hermes_memory.plugins.openviking.settings import (
    BATCH_FULL_CAP,
    BROWSE_MAX,
    READ_CAPS,
    OpenVikingError,
    _holds_secrets,
    _is_remote,
    forget_uri_problem,
)


class VikingTools:
    """Tool methods of :class:`~hermes_memory.plugins.openviking.OpenVikingProvider` (a mixin: uses its HTTP client, settings and lock)."""

    # What the host (OpenVikingProvider, a MemoryProvider) provides; declared for the type checker.
    _agent_context: str
    _home: Path | None
    _registered: set[str]
    _session_id: str
    _settings: dict[str, Any]

    if TYPE_CHECKING:
        def _writes_ok(self) -> bool: ...
        def _http(self) -> httpx.Client: ...
        def _request(self, method: str, path: str, *, timeout: float | None = None, **kw: Any) -> Any: ...
        def _user_id(self) -> str: ...
        @staticmethod
        def tool_error(message: str, **extra: Any) -> str: ...
        @staticmethod
        def tool_result(payload: Any) -> str: ...

    # -- tools ------------------------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {"name": "viking_search",
             "description": ("Search OpenViking (memories, resources, skills) for context relevant to a query. "
                             "mode: fast (vector find), deep (session-aware search), auto (= fast)."),
             "parameters": {"type": "object", "properties": {
                 "query": {"type": "string", "description": "What to look for."},
                 "mode": {"type": "string", "enum": ["auto", "fast", "deep"]},
                 "scope": {"type": "string", "description": "viking:// prefix to search under (optional)."},
                 "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Default 10."},
             }, "required": ["query"]}},
            {"name": "viking_read",
             "description": "Read one or up to 3 viking:// URIs at abstract, overview (default) or full detail.",
             "parameters": {"type": "object", "properties": {
                 "uri": {"type": "string"},
                 "uris": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                 "level": {"type": "string", "enum": ["abstract", "overview", "full"]},
             }, "required": []}},
            {"name": "viking_browse",
             "description": "Browse the viking:// tree: list a folder, show a tree, or stat one entry.",
             "parameters": {"type": "object", "properties": {
                 "action": {"type": "string", "enum": ["tree", "list", "stat"]},
                 "path": {"type": "string", "description": "viking:// URI (default viking://)."},
             }, "required": ["action"]}},
            {"name": "viking_remember",
             "description": "Store a durable fact or preference about the user as a new OpenViking memory file.",
             "parameters": {"type": "object", "properties": {
                 "content": {"type": "string", "description": "The fact, self-contained."},
             }, "required": ["content"]}},
            {"name": "viking_forget",
             "description": "Delete one user memory file (a concrete viking://user/.../memories/....md URI).",
             "parameters": {"type": "object", "properties": {
                 "uri": {"type": "string"},
             }, "required": ["uri"]}},
            {"name": "viking_add_resource",
             "description": ("Add a resource (web page, git repo, or a local file/folder) to OpenViking so it "
                             "becomes searchable."),
             "parameters": {"type": "object", "properties": {
                 "url": {"type": "string", "description": "http(s)/git URL or a local path."},
                 "reason": {"type": "string"},
                 "to": {"type": "string", "description": "Exact target viking:// URI (not with parent)."},
                 "parent": {"type": "string", "description": "Parent viking:// folder (not with to)."},
                 "instruction": {"type": "string"},
                 "wait": {"type": "boolean", "description": "Wait for processing to finish."},
                 "timeout": {"type": "number", "description": "Seconds to wait when wait=true."},
             }, "required": ["url"]}},
        ]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a ``viking_*`` tool; returns JSON. Every failure is ``{"error": ...}``, never an exception."""
        args = args or {}
        handler = {
            "viking_search": self._tool_search, "viking_read": self._tool_read, "viking_browse": self._tool_browse,
            "viking_remember": self._tool_remember, "viking_forget": self._tool_forget,
            "viking_add_resource": self._tool_add_resource,
        }.get(tool_name)
        if handler is None:
            return self.tool_error(f"unknown OpenViking tool {tool_name!r}")
        try:
            return handler(args)
        except (OpenVikingError, ValueError, OSError) as exc:
            return self.tool_error(str(exc), tool=tool_name)

    def _search(self, query: str, *, mode: str = "fast", scope: str = "", limit: int = 10,
                score_threshold: float | None = None, timeout: float | None = None) -> list[dict[str, Any]]:
        body: dict[str, Any] = {"query": query, "limit": limit}
        if score_threshold is not None:
            body["score_threshold"] = score_threshold
        if scope:
            body["target_uri"] = scope
        path = "/api/v1/search/find"
        if mode == "deep":
            path = "/api/v1/search/search"
            if self._session_id and self._session_id in self._registered:
                body["session_id"] = self._session_id
        result = self._request("POST", path, json=body, timeout=timeout) or {}
        items: list[dict[str, Any]] = []
        for bucket in ("memories", "resources", "skills"):
            for it in result.get(bucket) or []:
                if isinstance(it, dict) and it.get("uri"):
                    items.append({"uri": it["uri"], "type": it.get("context_type") or bucket.rstrip("s"),
                                  "score": float(it.get("score") or 0.0), "level": it.get("level"),
                                  "abstract": it.get("abstract") or "",
                                  "related": [r.get("uri", r) if isinstance(r, dict) else r
                                              for r in (it.get("relations") or [])]})
        items.sort(key=lambda i: -i["score"])
        return items

    def _tool_search(self, args: dict[str, Any]) -> str:
        query = str(args.get("query") or "").strip()
        if not query:
            return self.tool_error("viking_search needs a non-empty 'query'")
        mode = str(args.get("mode") or "auto")
        if mode not in ("auto", "fast", "deep"):
            return self.tool_error(f"mode must be auto, fast or deep, not {mode!r}")
        scope = str(args.get("scope") or "").strip()
        if scope and not scope.startswith("viking://"):
            return self.tool_error(f"scope must be a viking:// URI prefix, not {scope!r}")
        try:
            limit = min(50, max(1, int(args.get("limit") or 10)))
        except (TypeError, ValueError):
            return self.tool_error("limit must be an integer between 1 and 50")
        items = self._search(query, mode="deep" if mode == "deep" else "fast", scope=scope, limit=limit)[:limit]
        for it in items:
            it.pop("level", None)
        return self.tool_result({"results": items, "total": len(items)})

    def _read_one(self, uri: str, level: str, cap: int) -> str:
        if level in ("abstract", "overview"):
            try:
                text = self._request("GET", f"/api/v1/content/{level}", params={"uri": uri})
            except OpenVikingError:
                text = self._request("GET", "/api/v1/content/read", params={"uri": uri})  # files have no summary
        else:
            text = self._request("GET", "/api/v1/content/read", params={"uri": uri})
        text = text if isinstance(text, str) else str(text or "")
        return text if len(text) <= cap else text[:cap] + "\n…[truncated]"

    def _tool_read(self, args: dict[str, Any]) -> str:
        uris = args.get("uris") or ([args["uri"]] if args.get("uri") else [])
        if isinstance(uris, str):
            uris = [uris]
        if not isinstance(uris, (list, tuple)):
            return self.tool_error(f"uris must be a list of viking:// URIs, got {type(uris).__name__}")
        uris = [str(u).strip() for u in uris if str(u).strip()]
        if not uris:
            return self.tool_error("viking_read needs 'uri' or 'uris'")
        if len(uris) > 3:
            return self.tool_error(f"viking_read reads at most 3 URIs at once, got {len(uris)}")
        bad = [u for u in uris if not u.startswith("viking://")]
        if bad:
            return self.tool_error(f"not a viking:// URI: {bad[0]!r}")
        level = str(args.get("level") or "overview")
        if level not in READ_CAPS:
            return self.tool_error(f"level must be abstract, overview or full, not {level!r}")
        cap = BATCH_FULL_CAP if (level == "full" and len(uris) > 1) else READ_CAPS[level]
        results = []
        for uri in uris:
            try:
                results.append({"uri": uri, "level": level, "content": self._read_one(uri, level, cap)})
            except OpenVikingError as exc:
                if len(uris) == 1:
                    raise
                results.append({"uri": uri, "error": str(exc)})
        return self.tool_result(results[0] if len(results) == 1 else {"results": results})

    def _tool_browse(self, args: dict[str, Any]) -> str:
        action = str(args.get("action") or "")
        if action not in ("tree", "list", "stat"):
            return self.tool_error("action must be tree, list or stat")
        path = str(args.get("path") or "viking://").strip()
        if not path.startswith("viking://"):
            return self.tool_error(f"path must be a viking:// URI, not {path!r}")
        route = {"tree": "tree", "list": "ls", "stat": "stat"}[action]
        result = self._request("GET", f"/api/v1/fs/{route}", params={"uri": path})
        if action == "stat":
            return self.tool_result({"entry": result})
        entries = []
        for e in (result or [])[:BROWSE_MAX]:
            if isinstance(e, dict):
                uri = e.get("uri", "")
                entries.append({"name": e.get("name") or uri.rstrip("/").rsplit("/", 1)[-1], "uri": uri,
                                "type": "dir" if e.get("isDir") else "file", "abstract": e.get("abstract", "")})
        return self.tool_result({"path": path, "entries": entries, "truncated": len(result or []) > BROWSE_MAX})

    def _memory_uri(self, kind: str) -> str:
        uid = self._user_id()
        peer = f"peers/{self._settings['agent']}/" if self._settings["agent"] else ""
        return f"viking://user/{uid}/{peer}memories/{kind}/mem_{secrets.token_hex(6)}.md"

    def _write_memory(self, content: str, kind: str) -> dict[str, Any]:
        uri = self._memory_uri(kind)
        result = self._request("POST", "/api/v1/content/write", json={"uri": uri, "content": content, "mode": "create"})
        return {"uri": uri, **({"task_id": result.get("task_id")} if isinstance(result, dict) else {})}

    def _tool_remember(self, args: dict[str, Any]) -> str:
        content = str(args.get("content") or "").strip()
        if not content:
            return self.tool_error("viking_remember needs a non-empty 'content'")
        if not self._writes_ok():
            return self.tool_error(f"viking_remember is disabled in the {self._agent_context!r} agent context; "
                                   "only the primary agent writes memory")
        return self.tool_result({"status": "stored", **self._write_memory(content, "preferences")})

    def _tool_forget(self, args: dict[str, Any]) -> str:
        uri = str(args.get("uri") or "").strip()
        problem = forget_uri_problem(uri) if uri else "viking_forget needs 'uri'"
        if problem:
            return self.tool_error(problem)
        if not self._writes_ok():
            return self.tool_error(f"viking_forget is disabled in the {self._agent_context!r} agent context; "
                                   "only the primary agent writes memory")
        self._request("DELETE", "/api/v1/fs", params={"uri": uri, "recursive": "false"})
        return self.tool_result({"status": "forgotten", "uri": uri})

    def _tool_add_resource(self, args: dict[str, Any]) -> str:
        url = str(args.get("url") or "").strip()
        if not url:
            return self.tool_error("viking_add_resource needs 'url'")
        if args.get("to") and args.get("parent"):
            return self.tool_error("give either 'to' or 'parent', not both")
        if not self._writes_ok():
            return self.tool_error(f"viking_add_resource is disabled in the {self._agent_context!r} agent context")
        body: dict[str, Any] = {k: args[k] for k in ("to", "parent", "reason", "instruction") if args.get(k)}
        wait = bool(args.get("wait"))
        body["wait"] = wait
        timeout = None
        if wait:
            try:
                timeout = float(args.get("timeout") or self._settings["timeout"])
            except (TypeError, ValueError):
                return self.tool_error("timeout must be a number of seconds")
        if _is_remote(url):
            body["path"] = url
        else:
            body["temp_file_id"] = self._upload(Path(url).expanduser())
        result = self._request("POST", "/api/v1/resources", json=body, timeout=timeout) or {}
        return self.tool_result({"status": "added", "root_uri": result.get("root_uri")})

    def _upload(self, path: Path) -> str:
        """Upload a local file (a folder is zipped first) with ``resources/temp_upload``; return its temp id."""
        if not path.exists():
            raise ValueError(f"{path} does not exist; give an http(s)/git URL or an existing local path")
        if _holds_secrets(path, self._home or resolve_home()):
            raise ValueError(f"refusing to upload {path}: it is or contains a secrets file (.env*)")
        with tempfile.TemporaryDirectory() as tmp:
            target = path
            if path.is_dir():
                target = Path(shutil.make_archive(str(Path(tmp) / path.name), "zip", root_dir=path))
            mime = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            client = self._http()
            headers = {k: v for k, v in client.headers.items() if k.lower() != "content-type"}
            with target.open("rb") as fh:
                try:
                    resp = httpx.post(f"{client.base_url}/api/v1/resources/temp_upload", headers=headers,
                                      files={"file": (target.name, fh, mime)}, timeout=self._settings["timeout"],
                                      trust_env=False)
                except httpx.TimeoutException as exc:
                    raise OpenVikingError(f"OpenViking did not accept the upload within "
                                          f"{self._settings['timeout']:g} s") from exc
                except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL (URL too long...) is no HTTPError
                    raise OpenVikingError(f"cannot reach OpenViking at {client.base_url}: {exc}") from exc
        try:
            payload = resp.json()
        except ValueError:
            payload = {}
        if resp.status_code >= 400 or payload.get("status") == "error":
            raise OpenVikingError(f"OpenViking upload failed (HTTP {resp.status_code}): {resp.text[:300]}")
        temp_id = (payload.get("result") or {}).get("temp_file_id")
        if not temp_id:
            raise OpenVikingError("OpenViking upload answered without result.temp_file_id")
        return str(temp_id)
