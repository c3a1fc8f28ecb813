"""A local OpenAI-compatible model endpoint on 127.0.0.1 for real backends under test.

Serves ``GET /v1/models``, ``POST /v1/embeddings`` and ``POST /v1/chat/completions`` in the OpenAI wire
format. Embeddings are deterministic bags of hashed words (``DIM`` floats, L2-normalised), so texts that
share words are close and a semantic search over them behaves predictably. Chat completions answer with
``reply_fn(messages)`` (default: a short JSON-free summary of the last user message), which a test can
replace to return the structured JSON a backend expects.

Run in-process: ``with ModelServer() as srv: srv.base_url`` (``http://127.0.0.1:<port>/v1``), or as a
script: ``python model_server.py --port N`` (used by real-backend tests that need a separate process).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIM = 64


def embed(text: str, dim: int = DIM) -> list[float]:
    """Deterministic embedding: each lower-cased word (2+ chars) adds 1 at sha256(word) mod dim."""
    vec = [0.0] * dim
    for word in re.findall(r"[a-z0-9]{2,}", (text or "").lower()):
        vec[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % dim] += 1.0
    if not any(vec):
        vec[0] = 1.0  # an empty text still gets a valid unit vector
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec]


def default_reply(messages: list[dict[str, Any]]) -> str:
    last = next((m for m in reversed(messages) if m.get("role") == "user"), {"content": ""})
    content = last.get("content")
    if isinstance(content, list):
        content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "Summary: " + str(content or "")[:200]


class ModelServer:
    """Threaded OpenAI-compatible fake; records every request in ``requests`` (path, body)."""

    def __init__(self, port: int = 0, dim: int = DIM,
                 reply_fn: Callable[[list[dict[str, Any]]], str] | None = None) -> None:
        self.dim = dim
        self.reply_fn = reply_fn or default_reply
        self.requests: list[tuple[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                server.requests.append((self.path, None))
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append((self.path, body))
                if self.path.endswith("/embeddings"):
                    inputs = body.get("input")
                    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
                    data = [{"object": "embedding", "index": i, "embedding": embed(str(t), server.dim)}
                            for i, t in enumerate(inputs)]
                    self._send(200, {"object": "list", "data": data, "model": body.get("model", "fake"),
                                     "usage": {"prompt_tokens": 1, "total_tokens": 1}})
                elif self.path.endswith("/chat/completions"):
                    text = server.reply_fn(body.get("messages") or [])
                    self._send(200, {
                        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                        "model": body.get("model", "fake"),
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": text}}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    })
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--dim", type=int, default=DIM)
    ns = parser.parse_args()
    srv = ModelServer(ns.port, ns.dim).start()
    print(srv.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()
