"""Fake Hindsight API (the routes, request fields and reply shapes of docs/providers.md §3.4).

Routes: ``GET /health``, ``GET /version``, ``POST /v1/default/banks/{bank}/memories`` (retain),
``POST …/memories/recall``, ``POST …/reflect``, ``GET …/operations/{op}``. Replies carry every field the
``hindsight-client`` models require, so the real SDK parses them. Retained items are kept per bank;
recall returns the items sharing a word (3+ letters) with the query, best overlap first, typed with the
first requested type. With ``api_key`` set, requests without ``Authorization: Bearer <key>`` get 401.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from tests.helpers.http import LocalHTTPServer, Request

BANK = r"/v1/default/banks/([^/]+)"
FEATURES = {"observations": True, "mcp": False, "worker": True, "bank_config_api": True, "bank_llm_health": False,
            "file_upload_api": False, "document_export_api": False, "document_import_api": False, "audit_log": False,
            "llm_trace": False, "store_document_text": True}


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z0-9]{3,}", text or "")}


class FakeHindsight(LocalHTTPServer):
    def __init__(self, api_key: str = "", version: str = "1.1.0") -> None:
        super().__init__(name="hindsight")
        self.api_key = api_key
        self.version = version
        self.banks: dict[str, list[dict[str, Any]]] = {}
        self.operations: dict[str, str] = {}
        self.route("GET", "/health", lambda r: (200, {"status": "healthy"}))
        self.route("GET", "/version", self._version)
        self.route("POST", BANK + "/memories", self._retain)
        self.route("POST", BANK + "/memories/recall", self._recall)
        self.route("POST", BANK + "/reflect", self._reflect)
        self.route("GET", BANK + "/operations/([^/]+)", self._operation)

    def _version(self, req: Request) -> tuple[int, Any]:
        if self.version < "0.5":  # older servers reported fewer feature flags
            return 200, {"api_version": self.version, "features": {"observations": False}}
        return 200, {"api_version": self.version, "features": FEATURES}

    def dispatch(self, req: Request) -> Any:
        if self.api_key and req.headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, {"detail": "Invalid or missing API key"}
        return super().dispatch(req)

    def _retain(self, req: Request) -> tuple[int, Any]:
        bank = req.groups[0]
        body = req.body or {}
        items = body.get("items")
        if not isinstance(items, list) or not items:
            return 422, {"detail": [{"loc": ["body", "items"], "msg": "field required"}]}
        for item in items:
            if not isinstance(item, dict) or not item.get("content"):
                return 422, {"detail": [{"loc": ["body", "items", "content"], "msg": "field required"}]}
            meta = item.get("metadata") or {}
            if any(not isinstance(v, str) for v in meta.values()):
                return 422, {"detail": [{"loc": ["body", "items", "metadata"], "msg": "values must be strings"}]}
        stored = self.banks.setdefault(bank, [])
        for item in items:
            stored.append({"id": str(uuid.uuid4()), **item})
        is_async = bool(body.get("async"))
        reply: dict[str, Any] = {"success": True, "bank_id": bank, "items_count": len(items), "async": is_async}
        if is_async:
            op = str(uuid.uuid4())
            self.operations[op] = "completed"
            reply["operation_id"] = op
        return 200, reply

    def _recall(self, req: Request) -> tuple[int, Any]:
        body = req.body or {}
        if not body.get("query"):
            return 422, {"detail": [{"loc": ["body", "query"], "msg": "field required"}]}
        if body.get("budget", "mid") not in ("low", "mid", "high"):
            return 422, {"detail": [{"loc": ["body", "budget"], "msg": "must be low, mid or high"}]}
        query = _words(body["query"])
        kind = (body.get("types") or ["world"])[0]
        scored = []
        for item in self.banks.get(req.groups[0], []):
            overlap = len(query & _words(str(item["content"])))
            if overlap:
                scored.append((overlap, item))
        scored.sort(key=lambda p: -p[0])
        results = [{"id": it["id"], "text": str(it["content"]), "type": kind, "context": it.get("context"),
                    "tags": it.get("tags") or [], "metadata": it.get("metadata") or {},
                    "document_id": it.get("document_id")} for _, it in scored]
        return 200, {"results": results}

    def _reflect(self, req: Request) -> tuple[int, Any]:
        body = req.body or {}
        if not body.get("query"):
            return 422, {"detail": [{"loc": ["body", "query"], "msg": "field required"}]}
        facts = [str(it["content"]) for it in self.banks.get(req.groups[0], [])
                 if _words(body["query"]) & _words(str(it["content"]))]
        text = ("Based on memory: " + " ".join(facts)) if facts else "I have no memories about that."
        return 200, {"text": text}

    def _operation(self, req: Request) -> tuple[int, Any]:
        op = req.groups[1]
        if op not in self.operations:
            return 404, {"detail": "operation not found"}
        return 200, {"operation_id": op, "status": self.operations[op]}
