"""Fake Mem0 Platform API (the routes `mem0ai`'s ``MemoryClient`` 2.2 calls), on 127.0.0.1.

Routes (docs/providers.md §2.4): ``GET /v1/ping/``; ``POST /v3/memories/add/`` (async add: replies
``{event_id, status: "PENDING"}``, the memory is stored at once) and the older ``POST /v1/memories/``;
``GET /v1/event/{id}/``; ``POST /v3/memories/search/`` and ``/v2/memories/search/``
(``{query, filters:{user_id}, top_k, rerank}`` -> ``{results:[{id, memory, score, metadata,
created_at, user_id}]}``); ``PUT /v1/memories/{id}/`` (``{text}``); ``DELETE /v1/memories/{id}/``.
Auth: ``Authorization: Token <key>``; a wrong key gets 401.

Also the self-hosted server's routes (the mem0 repository's FastAPI ``server/``), on the same store:
``POST /memories`` (``{messages, user_id, agent_id, infer, metadata}`` -> ``{results}``),
``POST /search`` (``{query, top_k, filters:{user_id}}`` -> ``{results}``), ``PUT /memories/{id}``
(``{text}``), ``DELETE /memories/{id}``, ``DELETE /memories?user_id=`` (deletes all of that user's
memories); auth by ``X-API-Key: <key>``.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from tests.helpers.http import Reply, Request
from tests.plugins.fakes.base import FakeService, overlap


class FakeMem0(FakeService):
    def __init__(self, api_key: str = "m0-test-key") -> None:
        super().__init__(name="mem0")
        self.api_key = api_key
        self.memories: dict[str, dict[str, Any]] = {}
        self.events: dict[str, dict[str, Any]] = {}
        self.add_route("GET", "/v1/ping/", self._ping)
        self.add_route("POST", "/v3/memories/add/", self._add_v3)
        self.add_route("POST", "/v1/memories/", self._add_v1)
        self.add_route("GET", "/v1/event/{eid}/", self._event)
        self.add_route("POST", "/v3/memories/search/", self._search)
        self.add_route("POST", "/v2/memories/search/", self._search)
        self.add_route("PUT", "/v1/memories/{mid}/", self._update)
        self.add_route("DELETE", "/v1/memories/{mid}/", self._delete)
        self.add_route("POST", "/memories", self._sh(lambda q, p: {"results": self._store(q)}))
        self.add_route("POST", "/search", self._sh(self._search))
        self.add_route("PUT", "/memories/{mid}", self._sh(self._update))
        self.add_route("DELETE", "/memories/{mid}", self._sh(self._delete))
        self.add_route("DELETE", "/memories", self._sh(self._delete_all))

    def _sh(self, handler: Any) -> Any:
        """Self-hosted auth (``X-API-Key``) in front of a shared handler."""

        def wrapped(req: Request, params: dict[str, str]) -> Any:
            if req.headers.get("x-api-key") != self.api_key:
                return Reply(401, {"detail": "Invalid API key"})
            req.headers["authorization"] = f"Token {self.api_key}"
            return handler(req, params)

        return wrapped

    def _auth(self, req: Request) -> Reply | None:
        if req.headers.get("authorization") != f"Token {self.api_key}":
            return Reply(401, {"detail": "Invalid API key"})
        return None

    def _ping(self, req: Request, _: dict[str, str]) -> Any:
        return self._auth(req) or {"status": "ok", "org_id": "org-1", "project_id": "proj-1",
                                   "user_email": "tester@example.invalid"}

    def _store(self, req: Request) -> list[dict[str, Any]]:
        body = req.body
        out = []
        for msg in body["messages"]:
            mid = str(uuid.uuid4())
            now = datetime.now(UTC).isoformat()
            self.memories[mid] = {"id": mid, "memory": msg["content"], "role": msg.get("role", "user"),
                                  "user_id": body.get("user_id"), "agent_id": body.get("agent_id"),
                                  "metadata": body.get("metadata") or {}, "infer": body.get("infer"),
                                  "created_at": now, "updated_at": now}
            out.append({"id": mid, "memory": msg["content"], "event": "ADD"})
        return out

    def _add_v3(self, req: Request, _: dict[str, str]) -> Any:
        if (bad := self._auth(req)) is not None:
            return bad
        results = self._store(req)
        eid = str(uuid.uuid4())
        self.events[eid] = {"id": eid, "status": "SUCCEEDED", "results": results}
        return {"event_id": eid, "status": "PENDING", "message": "Memory processing has been queued"}

    def _add_v1(self, req: Request, _: dict[str, str]) -> Any:
        return self._auth(req) or self._store(req)

    def _event(self, req: Request, p: dict[str, str]) -> Any:
        ev = self.events.get(p["eid"])
        return ev if ev else Reply(404, {"detail": "Event not found"})

    def _search(self, req: Request, _: dict[str, str]) -> Any:
        if (bad := self._auth(req)) is not None:
            return bad
        body = req.body
        query = body["query"]
        user_id = (body.get("filters") or {}).get("user_id")
        hits = []
        for m in list(self.memories.values()):
            if user_id and m["user_id"] != user_id:
                continue
            score = overlap(query, m["memory"])
            if score > 0:
                hits.append({**{k: m[k] for k in ("id", "memory", "metadata", "created_at", "user_id")},
                             "score": round(score, 4)})
        hits.sort(key=lambda h: -h["score"])
        return {"results": hits[: int(body.get("top_k", 10))]}

    def _update(self, req: Request, p: dict[str, str]) -> Any:
        if (bad := self._auth(req)) is not None:
            return bad
        m = self.memories.get(p["mid"])
        if m is None:
            return Reply(404, {"detail": "Memory not found"})
        m["memory"] = req.body["text"]
        m["updated_at"] = datetime.now(UTC).isoformat()
        return {"id": m["id"], "memory": m["memory"], "updated_at": m["updated_at"]}

    def _delete_all(self, req: Request, p: dict[str, str]) -> Any:
        user = req.query.get("user_id")
        if not user:
            return Reply(400, {"detail": "At least one identifier is required."})
        for mid in [m for m, v in list(self.memories.items()) if v["user_id"] == user]:
            del self.memories[mid]
        return {"message": "All relevant memories deleted"}

    def _delete(self, req: Request, p: dict[str, str]) -> Any:
        if (bad := self._auth(req)) is not None:
            return bad
        if self.memories.pop(p["mid"], None) is None:
            return Reply(404, {"detail": "Memory not found"})
        return {"message": "Memory deleted successfully!"}
