"""A local Gemini API (``generateContent``, ``streamGenerateContent?alt=sse``, ``countTokens``) on
127.0.0.1 for the real Gemini CLI, recording every request (reached through ``GOOGLE_GEMINI_BASE_URL``).

Replies with the scripted text; a request that asks for JSON (``responseMimeType:
application/json``, as the CLI's routing and next-speaker checks do) gets a small JSON answer."""

from __future__ import annotations

import json
from typing import Any

from tests.helpers.http import Request, sse
from tests.helpers.model_fake import ScriptedModelServer

JSON_REPLY = {"reasoning": "a simple request", "model_choice": "flash", "next_speaker": "user",
              "complexity_reasoning": "simple", "complexity_score": 1}


class FakeGeminiServer(ScriptedModelServer):
    """Gemini ``v1beta`` models API; every request is kept in :attr:`requests`."""

    def error_body(self, kind: str, message: str, code: str | None = None) -> dict[str, Any]:
        return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}

    def handle(self, req: Request, body: dict[str, Any]) -> Any:
        route = req.path
        prompt_tokens = len(json.dumps(body.get("contents") or [])) // 4
        if route.endswith(":countTokens"):
            return 200, {"totalTokens": prompt_tokens}
        if not (route.endswith(":generateContent") or route.endswith(":streamGenerateContent")):
            return 404, self.error_body("not_found", f"unknown path {req.target}")
        config = body.get("generationConfig") or body.get("config") or {}
        if config.get("responseMimeType") == "application/json" or config.get("responseJsonSchema"):
            text = json.dumps(JSON_REPLY)
        else:
            reply = self.next_reply(body)
            text = reply if isinstance(reply, str) else str(reply)
        out = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP",
                               "index": 0}],
               "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": len(text) // 4 + 1,
                                 "totalTokenCount": prompt_tokens + len(text) // 4 + 1},
               "modelVersion": "gemini-2.5-flash"}
        self.responses.append(out)
        if route.endswith(":streamGenerateContent"):
            return sse([out], named=False)
        return 200, out
