"""Fake Honcho v3 API on 127.0.0.1: the routes the ``honcho-ai`` 2.x SDK calls (docs/providers.md §1.4).

All under ``/v3``, ``Authorization: Bearer <key>`` (a wrong key gets 401). Get-or-create for
workspaces, peers and sessions; session peers with their observation config; messages; session
context (summary, representation, card, messages); peer chat (a canned "dialectic" built from the
conclusions about the target, echoing ``reasoning_level``); peer cards (GET/PUT); peer message
search (word overlap); conclusions (create 201 / delete 204). Reply shapes follow the SDK's
pydantic models (``honcho.api_types``), so the real SDK validates them.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from tests.helpers.http import Reply, Request
from tests.plugins.fakes.base import FakeService, overlap

WS = "/v3/workspaces/{ws}"


def _now() -> str:
    return datetime.now(UTC).isoformat()


class FakeHoncho(FakeService):
    def __init__(self, api_key: str = "honcho-test-key") -> None:
        super().__init__(name="honcho")
        self.api_key = api_key
        self.workspaces: set[str] = set()
        self.peers: dict[str, dict[str, Any]] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.cards: dict[tuple[str, str], list[str]] = {}
        self.conclusions: dict[str, dict[str, Any]] = {}
        self.summaries: dict[str, str] = {}
        r = self.add_route
        r("POST", "/v3/workspaces", self._workspace)
        r("POST", WS + "/peers", self._peer)
        r("POST", WS + "/sessions", self._session)
        r("POST", WS + "/sessions/{sid}/peers", self._session_peers)
        r("POST", WS + "/sessions/{sid}/messages", self._messages)
        r("GET", WS + "/sessions/{sid}/context", self._context)
        r("POST", WS + "/peers/{peer}/chat", self._chat)
        r("GET", WS + "/peers/{peer}/card", self._get_card)
        r("PUT", WS + "/peers/{peer}/card", self._put_card)
        r("POST", WS + "/peers/{peer}/search", self._search)
        r("POST", WS + "/conclusions", self._create_conclusions)
        r("DELETE", WS + "/conclusions/{cid}", self._delete_conclusion)

    def dispatch(self, req: Request) -> Any:
        if req.headers.get("authorization") != f"Bearer {self.api_key}":
            return Reply(401, {"detail": "Invalid or missing API key"})
        return super().dispatch(req)

    # -- helpers for tests -------------------------------------------------------------------------
    def messages(self, sid: str) -> list[tuple[str, str]]:
        return [(m["peer_id"], m["content"]) for m in self.sessions.get(sid, {}).get("messages", [])]

    def about(self, target: str) -> list[str]:
        return [c["content"] for c in self.conclusions.values() if c["observed_id"] == target]

    # -- routes ------------------------------------------------------------------------------------
    def _workspace(self, req: Request, _: dict[str, str]) -> Any:
        self.workspaces.add(req.body["id"])
        return {"id": req.body["id"], "metadata": {}, "configuration": {}, "created_at": _now()}

    def _peer(self, req: Request, p: dict[str, str]) -> Any:
        pid = req.body["id"]
        peer = self.peers.setdefault(pid, {"id": pid, "workspace_id": p["ws"], "created_at": _now(),
                                           "metadata": req.body.get("metadata") or {}, "configuration": {}})
        return peer

    def _session(self, req: Request, p: dict[str, str]) -> Any:
        sid = req.body["id"]
        s = self.sessions.setdefault(sid, {"peers": {}, "messages": [], "created_at": _now()})
        return {"id": sid, "is_active": True, "workspace_id": p["ws"], "metadata": {}, "configuration": {},
                "created_at": s["created_at"]}

    def _session_peers(self, req: Request, p: dict[str, str]) -> Any:
        s = self.sessions.get(p["sid"])
        if s is None:
            return Reply(404, {"detail": "Session not found"})
        s["peers"].update(req.body)
        return {}

    def _messages(self, req: Request, p: dict[str, str]) -> Any:
        s = self.sessions.get(p["sid"])
        if s is None:
            return Reply(404, {"detail": "Session not found"})
        msgs = req.body["messages"]
        if not 1 <= len(msgs) <= 100:
            return Reply(422, {"detail": "between 1 and 100 messages per request"})
        out = []
        for m in msgs:
            if m["peer_id"] not in s["peers"]:
                return Reply(422, {"detail": f"peer {m['peer_id']} is not in session {p['sid']}"})
            row = {"id": uuid.uuid4().hex[:12], "content": m["content"], "peer_id": m["peer_id"],
                   "session_id": p["sid"], "metadata": m.get("metadata") or {}, "created_at": _now(),
                   "workspace_id": p["ws"], "token_count": len(m["content"]) // 4}
            s["messages"].append(row)
            out.append(row)
        return Reply(201, out)

    def _context(self, req: Request, p: dict[str, str]) -> Any:
        s = self.sessions.get(p["sid"])
        if s is None:
            return Reply(404, {"detail": "Session not found"})
        target = req.query.get("peer_target")
        summary = self.summaries.get(p["sid"])
        out: dict[str, Any] = {"id": p["sid"], "messages": s["messages"][-20:], "summary": None,
                               "peer_representation": None, "peer_card": None}
        if summary and req.query.get("summary", "true").lower() == "true":
            out["summary"] = {"content": summary, "message_id": "m0", "summary_type": "short",
                              "created_at": _now(), "token_count": len(summary) // 4}
        if target:
            out["peer_representation"] = "; ".join(self.about(target)) or None
            out["peer_card"] = self.cards.get((target, target))
        return out

    def _chat(self, req: Request, p: dict[str, str]) -> Any:
        target = req.body.get("target") or p["peer"]
        facts = self.about(target)
        level = req.body.get("reasoning_level", "low")
        return {"content": f"({level}) {target}: " + "; ".join(facts) if facts else None}

    def _get_card(self, req: Request, p: dict[str, str]) -> Any:
        return {"peer_card": self.cards.get((p["peer"], req.query.get("target") or p["peer"]))}

    def _put_card(self, req: Request, p: dict[str, str]) -> Any:
        key = (p["peer"], req.query.get("target") or p["peer"])
        self.cards[key] = list(req.body["peer_card"])
        return {"peer_card": self.cards[key]}

    def _search(self, req: Request, p: dict[str, str]) -> Any:
        hits = [m for s in self.sessions.values() for m in s["messages"]
                if m["peer_id"] == p["peer"] and overlap(req.body["query"], m["content"]) > 0]
        return hits[: int(req.body.get("limit", 10))]

    def _create_conclusions(self, req: Request, p: dict[str, str]) -> Any:
        out = []
        for c in req.body["conclusions"]:
            cid = "c_" + uuid.uuid4().hex[:10]
            row = {"id": cid, "content": c["content"], "observer_id": c["observer_id"],
                   "observed_id": c["observed_id"], "session_id": c.get("session_id"), "created_at": _now()}
            self.conclusions[cid] = row
            out.append(row)
        return Reply(201, out)

    def _delete_conclusion(self, req: Request, p: dict[str, str]) -> Any:
        if self.conclusions.pop(p["cid"], None) is None:
            return Reply(404, {"detail": "Conclusion not found"})
        return Reply(204)
