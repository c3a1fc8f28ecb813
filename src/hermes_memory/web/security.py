"""Browser sign-in, CSRF tokens and response headers of the dashboard.

* Every browser gets a random session id in the cookie :data:`SID_COOKIE` (``HttpOnly``,
  ``SameSite=Strict``, ``Path=/``, no ``Max-Age``: it ends with the browser session).
* With a token set, a request is let in when it carries ``Authorization: Bearer <token>`` or a
  session id that signed in with the token (``POST /login``); a sign-in issues a *new* session id
  (no fixation). Signed-in ids live in this process only and expire after :data:`SIGN_IN_TTL_S`.
  Without a token (loopback binds only) every browser is let in.
* Every state-changing request (POST) carries the CSRF token of its session id: an HMAC-SHA256
  of the id under a per-process random key, sent as the form field ``csrf`` (or the header
  ``X-CSRF-Token``) and compared in constant time; and a present ``Origin`` header must name the
  request's own host. A bearer-authenticated request needs no CSRF token (no browser adds that
  header by itself).
* :data:`CSP` allows scripts and styles from this server only (no ``unsafe-inline``, no eval),
  no frames, no plugins, forms posting only here.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

from hermes_memory.httpguard import bearer_matches

SID_COOKIE = "hm_sid"
SIGN_IN_TTL_S = 7 * 24 * 3600.0
"""Seconds a browser stays signed in (within one server process)."""
MAX_SIGNED_IN = 10_000
"""Most signed-in browsers remembered; the oldest sign-ins are dropped first."""

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; connect-src 'self'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # "no-referrer" makes browsers send "Origin: null" on form posts
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class BrowserAuth:
    """Sign-in state and CSRF tokens of one dashboard process; ``token=None``: no sign-in needed."""

    def __init__(self, token: str | None) -> None:
        self.token = token or None
        self._key = secrets.token_bytes(32)
        self._signed_in: dict[str, float] = {}

    @staticmethod
    def new_sid() -> str:
        """A fresh random session id (256 bits, URL-safe)."""
        return secrets.token_urlsafe(32)

    def csrf_for(self, sid: str) -> str:
        """The CSRF token of session id ``sid`` (hex HMAC-SHA256)."""
        return hmac.new(self._key, b"csrf:" + sid.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, sid: str | None, given: str | None) -> bool:
        """True when ``given`` is the CSRF token of ``sid`` (constant-time)."""
        if not sid or not given:
            return False
        return hmac.compare_digest(self.csrf_for(sid).encode(), str(given).encode())

    def token_ok(self, given: str | None) -> bool:
        """True when ``given`` equals the configured token (constant-time); False without a token."""
        if self.token is None or given is None:
            return False
        return hmac.compare_digest(self.token.encode(), str(given).strip().encode())

    def bearer_ok(self, headers: list[tuple[bytes, bytes]]) -> bool:
        """True when the request carries ``Authorization: Bearer <token>``."""
        return self.token is not None and bearer_matches(headers, self.token.encode())

    def signed_in(self, sid: str | None) -> bool:
        """True when ``sid`` signed in with the token less than :data:`SIGN_IN_TTL_S` ago."""
        if self.token is None:
            return True
        if not sid:
            return False
        at = self._signed_in.get(sid)
        if at is None:
            return False
        if time.time() - at > SIGN_IN_TTL_S:
            self._signed_in.pop(sid, None)
            return False
        return True

    def sign_in(self) -> str:
        """Record a new signed-in browser and return its (new) session id."""
        sid = self.new_sid()
        self._signed_in[sid] = time.time()
        while len(self._signed_in) > MAX_SIGNED_IN:
            self._signed_in.pop(next(iter(self._signed_in)))
        return sid

    def sign_out(self, sid: str | None) -> None:
        """Forget ``sid``'s sign-in."""
        if sid:
            self._signed_in.pop(sid, None)


def same_origin(origin: str | None, host: str | None) -> bool:
    """True when there is no ``Origin`` header or it names ``host`` (``http(s)://<host>``)."""
    if not origin:
        return True
    if origin == "null" or not host:
        return False
    return origin in (f"http://{host}", f"https://{host}")
