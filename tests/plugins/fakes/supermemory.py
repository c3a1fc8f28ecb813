"""Fake Supermemory API on 127.0.0.1: the 5 routes the provider calls (docs/providers.md §6.4), camelCase JSON.

* ``POST /v3/documents`` ``{content, containerTags|containerTag, metadata, entityContext?}`` -> ``{id, status}``;
  the fake turns each document into one memory (its content) in the first container tag.
* ``POST /v4/search`` ``{q, containerTag, limit, searchMode?}`` -> ``{results:[{id, memory, similarity,
  updatedAt, metadata}], timing, total}``; similarity is the share of query words found.
* ``POST /v4/profile`` ``{containerTag, q?}`` -> ``{profile:{static, dynamic}, searchResults?}``.
* ``DELETE /v4/memories`` ``{containerTag, id}`` -> ``{id, forgotten}``.
* ``POST /v4/conversations`` ``{conversationId, messages:[{role, content}], containerTags, metadata}``.
Auth: ``Authorization: Bearer <key>``, else 401.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from tests.helpers.http import Reply, Request
from tests.plugins.fakes.base import FakeService, overlap


class FakeSupermemory(FakeService):
    def __init__(self, api_key: str = "sm-test-key") -> None:
        super().__init__(name="supermemory")
        self.api_key = api_key
        self.documents: dict[str, dict[str, Any]] = {}
        self.memories: dict[str, dict[str, Any]] = {}
        self.conversations: list[dict[str, Any]] = []
        self.profiles: dict[str, dict[str, list[str]]] = {}
        self.add_route("POST", "/v3/documents", self._add)
        self.add_route("POST", "/v4/search", self._search)
        self.add_route("POST", "/v4/profile", self._profile)
        self.add_route("DELETE", "/v4/memories", self._forget)
        self.add_route("POST", "/v4/conversations", self._conversation)

    def dispatch(self, req: Request) -> Any:
        if req.headers.get("authorization") != f"Bearer {self.api_key}":
            return Reply(401, {"error": "Unauthorized", "details": "bad api key"})
        if req.method in ("POST", "DELETE") and not isinstance(req.body, dict):
            return Reply(400, {"error": "JSON body expected"})
        return super().dispatch(req)

    def _add(self, req: Request, _: dict[str, str]) -> Any:
        b = req.body
        tags = b.get("containerTags") or ([b["containerTag"]] if b.get("containerTag") else [])
        did = "doc_" + uuid.uuid4().hex[:10]
        self.documents[did] = {"id": did, "content": b["content"], "containerTags": tags,
                               "metadata": b.get("metadata") or {}, "entityContext": b.get("entityContext")}
        mid = "mem_" + uuid.uuid4().hex[:10]
        self.memories[mid] = {"id": mid, "memory": b["content"], "tag": tags[0] if tags else "",
                              "metadata": b.get("metadata") or {}, "updatedAt": datetime.now(UTC).isoformat()}
        return {"id": did, "status": "queued"}

    def _hits(self, query: str, tag: str, limit: int) -> list[dict[str, Any]]:
        scored = [(overlap(query, m["memory"]), m) for m in list(self.memories.values()) if m["tag"] == tag]
        hits = sorted((x for x in scored if x[0] > 0), key=lambda x: -x[0])[:limit]
        return [{"id": m["id"], "memory": m["memory"], "similarity": round(s, 3), "updatedAt": m["updatedAt"],
                 "metadata": m["metadata"]} for s, m in hits]

    def _search(self, req: Request, _: dict[str, str]) -> Any:
        b = req.body
        hits = self._hits(b["q"], b.get("containerTag", ""), int(b.get("limit", 10)))
        return {"results": hits, "timing": 1.0, "total": len(hits)}

    def _profile(self, req: Request, _: dict[str, str]) -> Any:
        b = req.body
        prof = self.profiles.get(b["containerTag"], {"static": [], "dynamic": []})
        out: dict[str, Any] = {"profile": prof}
        if b.get("q"):
            hits = self._hits(b["q"], b["containerTag"], 10)
            out["searchResults"] = {"results": hits, "timing": 1.0, "total": len(hits)}
        return out

    def _forget(self, req: Request, _: dict[str, str]) -> Any:
        b = req.body
        m = self.memories.get(b.get("id", ""))
        if m is None or m["tag"] != b["containerTag"]:
            return Reply(404, {"error": "Memory not found"})
        del self.memories[b["id"]]
        return {"id": b["id"], "forgotten": True}

    def _conversation(self, req: Request, _: dict[str, str]) -> Any:
        b = req.body
        if not b["messages"] or not all({"role", "content"} <= set(m) for m in b["messages"]):
            return Reply(400, {"error": "messages need role and content"})
        self.conversations.append(b)
        return {"id": "conv_" + uuid.uuid4().hex[:8], "status": "queued"}
