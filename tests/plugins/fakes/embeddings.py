"""A deterministic OpenAI-compatible embeddings endpoint (``POST /v1/embeddings``) on 127.0.0.1.

Each text becomes a hashed bag of words (SHA-256 of each lower-cased word picks a dimension),
L2-normalised, so texts sharing words have a positive cosine similarity. Used to run mem0's
real open-source ``Memory`` offline with no model download.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from tests.plugins.fakes.base import FakeService, Request

DIMS = 64


def embed(text: str, dims: int = DIMS) -> list[float]:
    vec = [0.0] * dims
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vec[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec] if norm else vec


class FakeEmbeddings(FakeService):
    def __init__(self, dims: int = DIMS) -> None:
        super().__init__(name="embeddings")
        self.dims = dims
        self.route("POST", "/v1/embeddings", self._embeddings)

    def _embeddings(self, req: Request, _: dict[str, str]) -> Any:
        inputs = req.body["input"]
        inputs = [inputs] if isinstance(inputs, str) else inputs
        dims = int(req.body.get("dimensions") or self.dims)
        data = [{"object": "embedding", "index": i, "embedding": embed(t, dims)} for i, t in enumerate(inputs)]
        return {"object": "list", "data": data, "model": req.body.get("model", "fake"),
                "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}}
