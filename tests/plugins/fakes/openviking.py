"""Fake OpenViking server (the HTTP contract of docs/providers.md §8.4, replies shaped like openviking 0.5.2's).

Keeps a ``viking://`` file tree in memory and answers with the ``{status, result}`` envelope:

* ``GET /health``, ``GET /api/v1/system/status`` (``result.user``);
* ``GET /api/v1/fs/ls|tree|stat?uri=``, ``DELETE /api/v1/fs?uri=&recursive=``;
* ``GET /api/v1/content/read|abstract|overview?uri=``, ``POST /api/v1/content/write`` (``mode: create``
  refuses an existing file);
* ``POST /api/v1/search/find`` and ``/search/search``: files sharing a word with the query, as memories
  (``viking://user/.../memories/...``) or resources, score = overlap / query words, L2 leaves;
* ``POST /api/v1/sessions`` (register), ``GET /api/v1/sessions/{sid}``, ``POST …/messages``,
  ``POST …/messages/batch``, ``POST …/commit``. Like official OpenViking >= 0.3 with
  ``require_registration=True`` (the default here), messages to an unregistered session get 404;
* ``POST /api/v1/resources/temp_upload`` (multipart) and ``POST /api/v1/resources``.

With ``api_key`` set, a request must carry ``X-API-Key``; without, it must carry ``X-OpenViking-Account`` and
``X-OpenViking-User`` (else 400 "Trusted mode requests must include ...", as the real server in trusted mode).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from tests.helpers.http import LocalHTTPServer, Request


def ok(result: Any) -> tuple[int, Any]:
    return 200, {"status": "ok", "result": result, "error": None}


def err(status: int, code: str, message: str) -> tuple[int, Any]:
    return status, {"status": "error", "result": None, "error": {"code": code, "message": message}}


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z0-9]{3,}", text or "")}


class FakeOpenViking(LocalHTTPServer):
    def __init__(self, api_key: str = "", user: str = "default", require_registration: bool = True,
                 batch_route: bool = True) -> None:
        super().__init__(name="openviking")
        self.api_key = api_key
        self.user = user
        self.require_registration = require_registration
        self.files: dict[str, str] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.uploads: dict[str, tuple[str, int]] = {}
        self.resources: list[dict[str, Any]] = []
        api = "/api/v1"
        self.route("GET", "/health", lambda r: (200, {"status": "ok", "healthy": True, "version": "fake"}))
        self.route("GET", api + "/system/status", lambda r: ok({"initialized": True, "user": self.user}))
        self.route("GET", api + "/fs/(ls|tree|stat)", self._fs)
        self.route("DELETE", api + "/fs", self._delete)
        self.route("GET", api + "/content/(read|abstract|overview)", self._content)
        self.route("POST", api + "/content/write", self._write)
        self.route("POST", api + "/search/(find|search)", self._search)
        self.route("POST", api + "/sessions", self._create_session)
        self.route("GET", api + "/sessions/([^/]+)", self._get_session)
        self.route("POST", api + "/sessions/([^/]+)/messages", self._message)
        if batch_route:
            self.route("POST", api + "/sessions/([^/]+)/messages/batch", self._batch)
        self.route("POST", api + "/sessions/([^/]+)/commit", self._commit)
        self.route("POST", api + "/resources/temp_upload", self._upload)
        self.route("POST", api + "/resources", self._add_resource)

    def not_found(self, req: Request) -> Any:
        return 404, {"detail": "Not Found"}

    def dispatch(self, req: Request) -> Any:
        if req.path.startswith("/api/"):
            if self.api_key:
                if req.headers.get("x-api-key") != self.api_key:
                    return err(401, "UNAUTHENTICATED", "invalid API key")
            elif not (req.headers.get("x-openviking-account") and req.headers.get("x-openviking-user")):
                return err(400, "INVALID_ARGUMENT",
                           "Trusted mode requests must include X-OpenViking-Account and X-OpenViking-User")
        return super().dispatch(req)

    # -- filesystem ---------------------------------------------------------------------------------
    def _children(self, uri: str) -> list[dict[str, Any]]:
        prefix = uri.rstrip("/") + "/"
        if uri == "viking://":
            prefix = "viking://"
        seen: dict[str, dict[str, Any]] = {}
        for path, body in self.files.items():
            if not path.startswith(prefix):
                continue
            rest = path[len(prefix):]
            head = rest.split("/", 1)[0]
            child = prefix + head
            is_dir = "/" in rest
            seen.setdefault(child, {"uri": child, "name": head, "isDir": is_dir,
                                    "size": 0 if is_dir else len(body), "abstract": "" if is_dir else body[:100]})
        return sorted(seen.values(), key=lambda e: e["uri"])

    def _fs(self, req: Request) -> tuple[int, Any]:
        uri = req.query.get("uri", "viking://")
        action = req.groups[0]
        if action == "stat":
            if uri in self.files:
                return ok({"name": uri.rsplit("/", 1)[-1], "uri": uri, "isDir": False, "size": len(self.files[uri])})
            if any(p.startswith(uri.rstrip("/") + "/") for p in self.files):
                return ok({"name": uri.rstrip("/").rsplit("/", 1)[-1], "uri": uri, "isDir": True, "size": 0})
            return err(404, "NOT_FOUND", f"File not found: {uri}")
        if action == "ls":
            return ok(self._children(uri))
        prefix = uri.rstrip("/") + "/" if uri != "viking://" else "viking://"
        return ok([{"uri": p, "isDir": False, "size": len(b), "rel_path": p[len(prefix):], "abstract": b[:100]}
                   for p, b in sorted(self.files.items()) if p.startswith(prefix)])

    def _delete(self, req: Request) -> tuple[int, Any]:
        uri = req.query.get("uri", "")
        if uri not in self.files:
            return err(404, "NOT_FOUND", f"File not found: {uri}")
        del self.files[uri]
        return ok({"uri": uri, "estimated_deleted_count": 1, "task_id": str(uuid.uuid4())})

    def _content(self, req: Request) -> tuple[int, Any]:
        uri = req.query.get("uri", "")
        kind = req.groups[0]
        if kind == "read":
            if uri in self.files:
                return ok(self.files[uri])
            return err(404, "NOT_FOUND", f"File not found: {uri}")
        kids = self._children(uri)
        if uri in self.files or not kids:
            return err(400, "INVALID_ARGUMENT", f"{kind} is only available for directories: {uri}")
        text = f"# {uri}\n" + "\n".join(f"- {k['name']}: {k['abstract']}" for k in kids)
        return ok(text[:200] if kind == "abstract" else text)

    def _write(self, req: Request) -> tuple[int, Any]:
        body = req.body or {}
        uri, content, mode = body.get("uri"), body.get("content"), body.get("mode", "replace")
        if not uri or content is None:
            return 422, {"detail": [{"loc": ["body", "uri" if not uri else "content"], "msg": "Field required"}]}
        if mode == "create" and uri in self.files:
            return err(409, "ALREADY_EXISTS", f"File already exists: {uri}")
        self.files[uri] = content
        return ok({"uri": uri, "mode": mode, "written_bytes": len(content.encode()), "task_id": str(uuid.uuid4())})

    # -- search -------------------------------------------------------------------------------------
    def _search(self, req: Request) -> tuple[int, Any]:
        body = req.body or {}
        query = _words(body.get("query", ""))
        if not query:
            return err(400, "INVALID_ARGUMENT", "query is required")
        if req.groups[0] == "search" and body.get("session_id") and body["session_id"] not in self.sessions:
            return err(404, "NOT_FOUND", f"Session not found: {body['session_id']}")
        target = body.get("target_uri") or ""
        threshold = body.get("score_threshold") or 0.0
        memories: list[dict[str, Any]] = []
        resources: list[dict[str, Any]] = []
        for uri, text in self.files.items():
            if target and not uri.startswith(target):
                continue
            score = len(query & _words(text)) / len(query)
            if score <= 0 or score < threshold:
                continue
            kind = "memory" if "/memories/" in uri else "resource"
            item = {"context_type": kind, "uri": uri, "level": 2, "score": score, "abstract": text[:120],
                    "tags": []}
            (memories if kind == "memory" else resources).append(item)
        limit = int(body.get("limit") or 10)
        memories = sorted(memories, key=lambda i: -i["score"])[:limit]
        resources = sorted(resources, key=lambda i: -i["score"])[:limit]
        return ok({"memories": memories, "resources": resources, "skills": [],
                   "total": len(memories) + len(resources)})

    # -- sessions -----------------------------------------------------------------------------------
    def _create_session(self, req: Request) -> tuple[int, Any]:
        sid = (req.body or {}).get("session_id") or str(uuid.uuid4())
        self.sessions.setdefault(sid, {"messages": [], "commits": 0})
        return ok({"session_id": sid, "uri": f"viking://user/{self.user}/sessions/{sid}"})

    def _session(self, sid: str) -> dict[str, Any] | None:
        if sid not in self.sessions and not self.require_registration:
            self.sessions[sid] = {"messages": [], "commits": 0}
        return self.sessions.get(sid)

    def _get_session(self, req: Request) -> tuple[int, Any]:
        s = self.sessions.get(req.groups[0])
        if s is None:
            return err(404, "NOT_FOUND", f"Session not found: {req.groups[0]}")
        return ok({"session_id": req.groups[0], "message_count": len(s["messages"]), "commit_count": s["commits"],
                   "pending_tokens": sum(len(str(m)) for m in s["messages"]) // 4})

    @staticmethod
    def _valid_message(msg: Any) -> str:
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant", "system", "tool"):
            return "role must be user, assistant, system or tool"
        parts = msg.get("parts")
        if parts is None and msg.get("content") is None:
            return "a message needs parts or content"
        for part in parts or []:
            if part.get("type") == "text" and not isinstance(part.get("text"), str):
                return "text part needs text"
            if part.get("type") == "tool" and not part.get("tool_name"):
                return "tool part needs tool_name"
        return ""

    def _message(self, req: Request) -> tuple[int, Any]:
        s = self._session(req.groups[0])
        if s is None:
            return err(404, "NOT_FOUND", f"Session not found: {req.groups[0]}")
        problem = self._valid_message(req.body)
        if problem:
            return 422, {"detail": problem}
        s["messages"].append(req.body)
        return ok({"session_id": req.groups[0], "message_count": len(s["messages"])})

    def _batch(self, req: Request) -> tuple[int, Any]:
        s = self._session(req.groups[0])
        if s is None:
            return err(404, "NOT_FOUND", f"Session not found: {req.groups[0]}")
        msgs = (req.body or {}).get("messages")
        if not isinstance(msgs, list) or not msgs:
            return 422, {"detail": "messages must be a non-empty list"}
        for m in msgs:
            problem = self._valid_message(m)
            if problem:
                return 422, {"detail": problem}
        s["messages"].extend(msgs)
        return ok({"session_id": req.groups[0], "message_count": len(s["messages"]), "added": len(msgs)})

    def _commit(self, req: Request) -> tuple[int, Any]:
        sid = req.groups[0]
        s = self.sessions.get(sid)
        if s is None:
            return err(404, "NOT_FOUND", f"Session not found: {sid}")
        s["commits"] += 1
        # "extraction": every user text becomes an events memory, so a later search finds it
        for m in s["messages"]:
            if m.get("role") == "user":
                for part in m.get("parts") or []:
                    if part.get("type") == "text":
                        self.files[f"viking://user/{self.user}/memories/events/{uuid.uuid4().hex[:12]}.md"] = part["text"]
        s["messages"] = []
        return ok({"session_id": sid, "status": "accepted", "task_id": str(uuid.uuid4()), "archived": True})

    # -- resources ----------------------------------------------------------------------------------
    def _upload(self, req: Request) -> tuple[int, Any]:
        ctype = req.headers.get("content-type", "")
        if not ctype.startswith("multipart/form-data") or b'name="file"' not in req.raw:
            return 422, {"detail": "multipart field 'file' required"}
        m = re.search(rb'filename="([^"]+)"', req.raw)
        temp_id = f"tmp_{uuid.uuid4().hex[:8]}"
        self.uploads[temp_id] = ((m.group(1).decode() if m else "upload"), len(req.raw))
        return ok({"temp_file_id": temp_id})

    def _add_resource(self, req: Request) -> tuple[int, Any]:
        body = req.body or {}
        if body.get("to") and body.get("parent"):
            return err(400, "INVALID_ARGUMENT", "to and parent are mutually exclusive")
        if not body.get("path") and body.get("temp_file_id") not in self.uploads:
            return err(400, "INVALID_ARGUMENT", "path or a valid temp_file_id is required")
        name = body.get("path") or self.uploads[body["temp_file_id"]][0]
        slug = re.sub(r"[^A-Za-z0-9]+", "_", name.rsplit("/", 1)[-1]).strip("_") or "resource"
        root = body.get("to") or f"{(body.get('parent') or 'viking://resources').rstrip('/')}/{slug}"
        self.resources.append({**body, "root_uri": root})
        self.files[f"{root}/content.md"] = f"Resource from {name}. {body.get('reason', '')}"
        return ok({"status": "success", "root_uri": root})
