"""Holographic reduced representations over phase vectors (docs/providers.md §4.5).

A vector is ``dim`` phase angles in [0, 2π). Binding adds phases, unbinding subtracts them,
bundling takes the circular mean, similarity is the mean cosine of the phase differences
(in [-1, 1]). Atoms are derived from SHA-256, so the same word gives the same vector on every
machine. numpy is optional: :data:`HAVE_NUMPY` is False when it cannot be imported and every
function here then raises :class:`RuntimeError` (callers fall back to keyword search).
"""

from __future__ import annotations

import hashlib
import math
from functools import lru_cache
from typing import Any

try:  # optional dependency
    import numpy as np
except ImportError:  # pragma: no cover - exercised in a subprocess test
    np = None  # type: ignore[assignment]

HAVE_NUMPY = np is not None
DEFAULT_DIM = 1024
TWO_PI = 2.0 * math.pi
ROLE_CONTENT = "__hrr_role_content__"
ROLE_ENTITY = "__hrr_role_entity__"
EMPTY = "__hrr_empty__"
_PUNCT = '.,!?;:"\'()[]{}'
_MAGIC = b"HRR1"


def _need() -> None:
    if np is None:
        raise RuntimeError("numpy is not installed: HRR vectors are unavailable (pip install numpy)")


@lru_cache(maxsize=4096)
def _atom_cached(word: str, dim: int) -> Any:
    blocks = math.ceil(dim / 16)
    raw = b"".join(hashlib.sha256(f"{word}:{i}".encode()).digest() for i in range(blocks))
    vals = np.frombuffer(raw, dtype="<u2")[:dim].astype(np.float64)
    vec = vals * (TWO_PI / 65536.0)
    vec.setflags(write=False)
    return vec


@lru_cache(maxsize=4096)
def _unit_cached(word: str, dim: int) -> Any:
    vec = np.exp(1j * _atom_cached(word, dim))
    vec.setflags(write=False)
    return vec


def _unit(total: Any) -> Any:
    """Normalise a complex sum to unit phasors (a zero component becomes phase 0)."""
    mag = np.abs(total)
    out = np.ones_like(total)
    nz = mag > 1e-12
    out[nz] = total[nz] / mag[nz]
    return out


def atom(word: str, dim: int = DEFAULT_DIM) -> Any:
    """Deterministic phase vector for ``word``: SHA-256 of ``f"{word}:{i}"`` as little-endian uint16 × 2π/65536."""
    _need()
    return _atom_cached(word, dim)


def bind(a: Any, b: Any) -> Any:
    """``(a + b) mod 2π`` (circular convolution in phase space)."""
    _need()
    return np.mod(a + b, TWO_PI)


def unbind(m: Any, k: Any) -> Any:
    """``(m − k) mod 2π``; ``unbind(bind(a, b), a) == b``."""
    _need()
    return np.mod(m - k, TWO_PI)


def bundle(*vectors: Any) -> Any:
    """Circular mean ``angle(Σ exp(i·v)) mod 2π``; similar to each of its inputs."""
    _need()
    if not vectors:
        raise ValueError("bundle() needs at least one vector")
    stacked = np.stack(vectors)
    return np.mod(np.arctan2(np.sin(stacked).sum(axis=0), np.cos(stacked).sum(axis=0)), TWO_PI)


def similarity(a: Any, b: Any) -> float:
    """Mean ``cos(a − b)`` in [-1, 1] (1 = identical, ≈0 = unrelated)."""
    _need()
    return float(np.mean(np.cos(a - b)))


def tokens(text: str) -> list[str]:
    """Lowercase, split on whitespace, strip the punctuation ``.,!?;:"'()[]{}``, drop empties."""
    out = []
    for tok in text.lower().split():
        tok = tok.strip(_PUNCT)
        if tok:
            out.append(tok)
    return out


def encode_text(text: str, dim: int = DEFAULT_DIM) -> Any:
    """Bundle of the token atoms of ``text``; empty text → the atom ``__hrr_empty__``."""
    _need()
    toks = tokens(text)
    if not toks:
        return atom(EMPTY, dim)
    # circular mean computed on cached unit phasors (same result as bundle(), no trigonometry per call)
    total = np.sum([_unit_cached(t, dim) for t in toks], axis=0)
    return np.mod(np.angle(total), TWO_PI)


def encode_fact(content: str, entities: list[str], dim: int = DEFAULT_DIM) -> Any:
    """``bundle(bind(encode_text(content), ROLE_CONTENT), bind(atom(e.lower()), ROLE_ENTITY)...)``."""
    _need()
    toks = tokens(content)
    text_sum = np.sum([_unit_cached(t, dim) for t in toks], axis=0) if toks else _unit_cached(EMPTY, dim)
    # exp(i·bind(x, r)) = exp(i·x)·exp(i·r): bind and bundle in the phasor domain
    total = _unit(text_sum) * _unit_cached(ROLE_CONTENT, dim)
    if entities:
        role_e = _unit_cached(ROLE_ENTITY, dim)
        total = total + np.sum([_unit_cached(e.lower(), dim) for e in entities], axis=0) * role_e
    return np.mod(np.angle(total), TWO_PI)


def to_bytes(vec: Any) -> bytes:
    """``b"HRR1"`` + float32 phases (dim 1 uses raw float64, where the two layouts would collide)."""
    _need()
    arr = np.asarray(vec)
    if arr.size == 1:
        return arr.astype("<f8").tobytes()
    return _MAGIC + arr.astype("<f4").tobytes()


def from_bytes(blob: bytes | None, dim: int | None = None) -> Any:
    """Inverse of :func:`to_bytes`; also reads legacy raw float64. ``None``/empty/unreadable → ``None``.

    ``dim`` is accepted for symmetry; callers compare the length with their own dimension.
    """
    _need()
    if not blob:
        return None
    if blob[:4] == _MAGIC and (len(blob) - 4) % 4 == 0 and len(blob) > 8:
        return np.frombuffer(blob[4:], dtype="<f4").astype(np.float64)
    if len(blob) % 8 == 0:
        return np.frombuffer(blob, dtype="<f8").copy()
    return None  # not a vector we can read: treated as "no vector"


def complex_sum(vectors: list[Any]) -> Any:
    """Σ exp(i·v): the running sum behind a bank (``np.angle`` of it is the bundle)."""
    _need()
    return np.sum(np.exp(1j * np.stack(vectors)), axis=0) if vectors else None


def sum_to_bytes(total: Any) -> bytes:
    """Serialise a bank's complex running sum (complex128, prefixed ``HRRC``)."""
    return b"HRRC" + np.asarray(total, dtype="<c16").tobytes()


def sum_from_bytes(blob: bytes | None) -> Any:
    if not blob or blob[:4] != b"HRRC":
        return None
    return np.frombuffer(blob[4:], dtype="<c16").copy()


def snr(dim: int, n: int) -> float:
    """Signal-to-noise estimate ``sqrt(dim / n)`` of a bundle of ``n`` items (warn below 2)."""
    return math.sqrt(dim / n) if n > 0 else float("inf")


__all__ = [
    "DEFAULT_DIM", "HAVE_NUMPY", "ROLE_CONTENT", "ROLE_ENTITY", "atom", "bind", "bundle", "complex_sum",
    "encode_fact", "encode_text", "from_bytes", "similarity", "snr", "sum_from_bytes", "sum_to_bytes",
    "to_bytes", "tokens", "unbind",
]
