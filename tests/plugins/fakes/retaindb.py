"""Fake RetainDB API on 127.0.0.1: the routes the reference plugin's client calls (docs/providers.md §5.4).

Memories, files and ingested sessions live in dicts. Auth: ``Authorization: Bearer <key>`` on every
route, plus ``X-API-Key: <key>`` under ``/v1/memory`` and ``/v1/context``; a wrong key gets 401.
Errors are ``{"error": ..., "message": ...}``. ``legacy_only=True`` serves only the legacy
``/v1/memories`` routes for profile/add/delete (the primary ones answer 404), to test the fallback.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from tests.helpers.http import Reply, Request
from tests.plugins.fakes.base import FakeService, overlap


class FakeRetainDB(FakeService):
    def __init__(self, api_key: str = "rdb-test-key", legacy_only: bool = False) -> None:
        super().__init__(name="retaindb")
        self.api_key = api_key
        self.memories: dict[str, dict[str, Any]] = {}
        self.files: dict[str, dict[str, Any]] = {}
        self.sessions: list[dict[str, Any]] = []
        self.seeds: list[dict[str, Any]] = []
        self.agent_model: dict[str, Any] = {"memory_count": 0, "persona": "", "persistent_instructions": [],
                                            "working_style": ""}
        r = self.add_route
        r("POST", "/v1/context/query", self._context)
        r("POST", "/v1/memory/search", self._search)
        r("POST", "/v1/memory/ingest/session", self._ingest_session)
        r("POST", "/v1/memory/profile/{user}/ask", self._ask)
        r("GET", "/v1/memory/agent/{agent}/model", self._agent_model)
        r("POST", "/v1/memory/agent/{agent}/seed", self._seed)
        if not legacy_only:
            r("GET", "/v1/memory/profile/{user}", self._profile)
            r("POST", "/v1/memory", self._add)
            r("DELETE", "/v1/memory/{mid}", self._delete)
        r("GET", "/v1/memories", self._profile_legacy)
        r("POST", "/v1/memories", self._add)
        r("DELETE", "/v1/memories/{mid}", self._delete)
        r("POST", "/v1/files", self._upload)
        r("GET", "/v1/files", self._list_files)
        r("GET", "/v1/files/{fid}", self._file)
        r("GET", "/v1/files/{fid}/content", self._content)
        r("POST", "/v1/files/{fid}/ingest", self._ingest_file)
        r("DELETE", "/v1/files/{fid}", self._delete_file)

    def dispatch(self, req: Request) -> Any:
        if req.headers.get("authorization") != f"Bearer {self.api_key}":
            return Reply(401, {"error": "unauthorized", "message": "bad bearer token"})
        if req.path.startswith(("/v1/memory", "/v1/context")) and req.headers.get("x-api-key") != self.api_key:
            return Reply(401, {"error": "unauthorized", "message": "missing X-API-Key"})
        return super().dispatch(req)

    def _user_memories(self, user: str) -> list[dict[str, Any]]:
        return [m for m in list(self.memories.values()) if m["user_id"] == user]

    def _context(self, req: Request, _: dict[str, str]) -> Any:
        b = req.body
        hits = [m for m in self._user_memories(b["user_id"]) if overlap(b["query"], m["content"]) > 0]
        return {"results": [{"content": m["content"], "id": m["id"]} for m in hits]}

    def _search(self, req: Request, _: dict[str, str]) -> Any:
        b = req.body
        scored = [(overlap(b["query"], m["content"]), m) for m in self._user_memories(b["user_id"])]
        hits = sorted((x for x in scored if x[0] > 0), key=lambda x: -x[0])[: int(b.get("top_k", 8))]
        return {"results": [{**m, "score": s} for s, m in hits]}

    def _profile(self, req: Request, p: dict[str, str]) -> Any:
        return {"memories": [{"id": m["id"], "content": m["content"]} for m in self._user_memories(p["user"])]}

    def _profile_legacy(self, req: Request, _: dict[str, str]) -> Any:
        return {"memories": [{"id": m["id"], "content": m["content"]}
                             for m in self._user_memories(req.query["user_id"])]}

    def _add(self, req: Request, _: dict[str, str]) -> Any:
        b = req.body
        mid = "mem_" + uuid.uuid4().hex[:12]
        self.memories[mid] = {"id": mid, "content": b["content"], "user_id": b["user_id"], "project": b["project"],
                              "session_id": b.get("session_id"), "memory_type": b["memory_type"],
                              "importance": b["importance"]}
        return {"id": mid, "status": "stored"}

    def _delete(self, req: Request, p: dict[str, str]) -> Any:
        if self.memories.pop(p["mid"], None) is None:
            return Reply(404, {"error": "not_found", "message": f"memory {p['mid']} not found"})
        return {"deleted": True, "id": p["mid"]}

    def _ingest_session(self, req: Request, _: dict[str, str]) -> Any:
        b = req.body
        if not all({"role", "content", "timestamp"} <= set(msg) for msg in b["messages"]):
            return Reply(422, {"error": "invalid", "message": "each message needs role, content, timestamp"})
        self.sessions.append(b)
        return {"ok": True, "ingested": len(b["messages"])}

    def _ask(self, req: Request, p: dict[str, str]) -> Any:
        facts = [m["content"] for m in self._user_memories(p["user"])]
        level = req.body["reasoning_level"]
        return {"answer": f"({level}) The user: " + "; ".join(facts) if facts else ""}

    def _seed(self, req: Request, p: dict[str, str]) -> Any:
        self.seeds.append({"agent": p["agent"], **req.body})
        return {"ok": True}

    def _agent_model(self, req: Request, p: dict[str, str]) -> Any:
        return self.agent_model

    def _upload(self, req: Request, _: dict[str, str]) -> Any:
        ctype = req.headers.get("content-type", "")
        m = re.search(r"boundary=(.+)", ctype)
        if not m:
            return Reply(400, {"error": "bad_request", "message": "multipart body expected"})
        fields: dict[str, Any] = {}
        for part in req.raw.split(b"--" + m.group(1).encode()):
            head, _sep, data = part.partition(b"\r\n\r\n")
            name = re.search(rb'name="([^"]+)"', head)
            if not name:
                continue
            data = data[:-2] if data.endswith(b"\r\n") else data
            filename = re.search(rb'filename="([^"]+)"', head)
            fields[name.group(1).decode()] = (filename.group(1).decode(), data) if filename else data.decode()
        if "file" not in fields or "path" not in fields:
            return Reply(400, {"error": "bad_request", "message": "file and path are required"})
        fid = "file_" + uuid.uuid4().hex[:10]
        fname, data = fields["file"]
        self.files[fid] = {"id": fid, "name": fname, "path": fields["path"], "scope": fields.get("scope"),
                           "mime_type": "text/plain" if fname.endswith((".txt", ".md")) else "application/octet-stream",
                           "rdb_uri": f"rdb://files/{fid}", "data": data, "ingested": False}
        return {"file": {k: v for k, v in self.files[fid].items() if k != "data"}}

    def _list_files(self, req: Request, _: dict[str, str]) -> Any:
        prefix = req.query.get("prefix", "")
        items = [{k: v for k, v in f.items() if k != "data"} for f in self.files.values()
                 if f["path"].startswith(prefix)]
        return {"files": items[: int(req.query.get("limit", 50))]}

    def _file(self, req: Request, p: dict[str, str]) -> Any:
        f = self.files.get(p["fid"])
        if f is None:
            return Reply(404, {"error": "not_found", "message": "file not found"})
        return {"file": {k: v for k, v in f.items() if k != "data"}}

    def _content(self, req: Request, p: dict[str, str]) -> Any:
        f = self.files.get(p["fid"])
        if f is None:
            return Reply(404, {"error": "not_found", "message": "file not found"})
        return Reply(200, raw=f["data"], content_type=f["mime_type"])

    def _ingest_file(self, req: Request, p: dict[str, str]) -> Any:
        f = self.files.get(p["fid"])
        if f is None:
            return Reply(404, {"error": "not_found", "message": "file not found"})
        f["ingested"] = req.body or True
        return {"ok": True, "file_id": p["fid"]}

    def _delete_file(self, req: Request, p: dict[str, str]) -> Any:
        if self.files.pop(p["fid"], None) is None:
            return Reply(404, {"error": "not_found", "message": "file not found"})
        return {"deleted": True}
