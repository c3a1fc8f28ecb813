"""Session ids in the reference format."""

from __future__ import annotations

import secrets
import time


def new_session_id() -> str:
    """Session id in the reference format ``YYYYmmdd_HHMMSS_<6 hex>`` (local time)."""
    return time.strftime("%Y%m%d_%H%M%S") + "_" + secrets.token_hex(3)
