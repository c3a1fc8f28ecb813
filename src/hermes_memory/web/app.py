"""The dashboard's Starlette app: routes, sign-in, CSRF, headers, and the mount beside MCP.

Pages (server-rendered, Jinja2 with autoescape): ``/`` and ``/memory`` (both blocks, entries,
add/replace/remove, per-user profiles, frozen snapshot beside the live state), ``/sessions``
(filters, ``/sessions/search``, ``/sessions/<id>`` transcript, export, delete), ``/insights``
(SVG charts), ``/providers``. JSON of the same data under ``/api/...`` (GET only). Every page is
read from disk / ``state.db`` per request, so a write by another client shows on the next load.
See :mod:`hermes_memory.web.security` for sign-in, CSRF and the headers every response carries.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlencode

import anyio
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import Message, Receive, Scope, Send

from hermes_memory import __version__
from hermes_memory.httpguard import HostOriginGuard
from hermes_memory.web import charts
from hermes_memory.web.data import Backend, ProviderProblem, SessionFilter
from hermes_memory.web.security import SECURITY_HEADERS, SID_COOKIE, BrowserAuth, same_origin

logger = logging.getLogger(__name__)

HERE = Path(__file__).parent
Handler = Callable[[Request], Awaitable[Response]]

TOKEN_KEYS = (("cached_input", "c-cached", "input from the prompt cache"),
              ("uncached_input", "c-uncached", "uncached input"),
              ("output", "c-output", "output"))
MEMORY_SERIES = (("memory", "c-memory", "MEMORY.md"), ("user", "c-user", "USER.md"))


def highlight(snippet: str | None) -> Markup:
    """A search snippet with its ``>>>match<<<`` markers as ``<mark>``; every other character escaped."""
    out: list[str] = []
    text = snippet or ""
    while text:
        start = text.find(">>>")
        if start < 0:
            out.append(str(escape(text)))
            break
        end = text.find("<<<", start + 3)
        if end < 0:
            out.append(str(escape(text)))
            break
        out.append(str(escape(text[:start])))
        out.append(f"<mark>{escape(text[start + 3:end])}</mark>")
        text = text[end + 3:]
    return Markup("".join(out))


def when(ts: Any) -> str:
    """Epoch seconds as ``YYYY-MM-DD HH:MM`` UTC; ``"-"`` for none."""
    if ts in (None, ""):
        return "-"
    try:
        return datetime.fromtimestamp(float(ts), tz=UTC).strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError, OverflowError, OSError):
        return "-"


def as_text(value: Any) -> str:
    """Message content (str, list of parts, dict) as text: strings as they are, the rest as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def tool_call_parts(calls: Any) -> list[dict[str, str]]:
    """``[{"name", "arguments", "id"}]`` of an assistant message's ``tool_calls`` (any shape, as text)."""
    out = []
    for c in calls if isinstance(calls, list) else ([calls] if calls else []):
        if not isinstance(c, dict):
            out.append({"name": "?", "arguments": as_text(c), "id": ""})
            continue
        fn: dict[str, Any] = c["function"] if isinstance(c.get("function"), dict) else c
        args = fn.get("arguments", fn.get("input", ""))
        if isinstance(args, str):
            try:
                args = json.dumps(json.loads(args), ensure_ascii=False, indent=2)
            except (ValueError, RecursionError):  # not JSON, or nested past what Python parses
                pass
        out.append({"name": str(fn.get("name", "?")), "arguments": as_text(args), "id": str(c.get("id", ""))})
    return out


def sid_url(value: Any) -> str:
    """A session id as one URL path segment: every character but letters, digits and ``_.-~``
    percent-encoded, ``/`` too, so the link of session ``team/export`` never reads as session
    ``team``'s export (Jinja's ``urlencode`` keeps ``/``)."""
    return quote(str(value), safe="")


SESSION_ACTIONS = ("export", "delete")
"""What may follow a session id in ``/sessions/<id>/...``."""


def session_path(scope: Scope, prefix: str) -> tuple[str, str] | None:
    """``(session id, action)`` of a request for ``<prefix><id>`` or ``<prefix><id>/<action>``
    (``action`` ``""`` or one of :data:`SESSION_ACTIONS`), read from the still percent-encoded
    ``raw_path``, so a ``%2F`` inside the id (see :func:`sid_url`) stays part of it; ``None`` for
    any other shape or an empty id. Without ``raw_path`` (it is optional in ASGI) the decoded path
    is split as it is."""
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if isinstance(raw, bytes) and raw else quote(scope.get("path", ""), safe="/")
    if not path.startswith(prefix):
        return None
    parts = path[len(prefix):].split("/")
    if len(parts) > 2 or (len(parts) == 2 and parts[1] not in SESSION_ACTIONS):
        return None
    sid = unquote(parts[0], errors="replace")
    return (sid, parts[1] if len(parts) == 2 else "") if sid else None


def _templates() -> Jinja2Templates:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.globals.update(charts=charts, highlight=highlight, when=when, as_text=as_text,
                       tool_call_parts=tool_call_parts, version=__version__, human=charts.human,
                       TOKEN_KEYS=TOKEN_KEYS, MEMORY_SERIES=MEMORY_SERIES)
    env.filters["sid_url"] = sid_url
    return Jinja2Templates(env=env)


class Dashboard:
    """The dashboard over one :class:`Backend`; ``token``: sign-in required (see :mod:`.security`)."""

    def __init__(self, backend: Backend, *, token: str | None) -> None:
        self.backend = backend
        self.auth = BrowserAuth(token)
        self.templates = _templates()

    # -- plumbing -------------------------------------------------------------------------------
    def guard(self, handler: Handler, *, public: bool = False, api: bool = False) -> Handler:
        """Wrap ``handler``: session cookie, sign-in check, CSRF on POST, security headers."""

        async def endpoint(request: Request) -> Response:
            sid = request.cookies.get(SID_COOKIE)
            new_sid = None
            if not sid or len(sid) > 100:
                sid = new_sid = self.auth.new_sid()
            request.state.sid = sid
            bearer = self.auth.bearer_ok(request.headers.raw)
            request.state.bearer = bearer
            if not public and not bearer and not self.auth.signed_in(sid):
                if api or request.method != "GET":
                    resp: Response = JSONResponse({"error": "sign in first: open /login in a browser, or send "
                                                   "'Authorization: Bearer <token>'"}, status_code=401)
                else:
                    resp = RedirectResponse("/login", status_code=303)
            elif request.method == "POST" and not bearer and not await self._csrf_ok(request, sid):
                resp = self.page(request, "error.html", {"title": "Refused", "message": (
                    "This form was refused: it carried no valid CSRF token or came from another site. "
                    "Reload the page and try again.")}, status=403)
            else:
                resp = await handler(request)
            for k, v in SECURITY_HEADERS.items():
                resp.headers.setdefault(k, v)
            if new_sid is not None and SID_COOKIE not in resp.headers.get("set-cookie", ""):
                resp.set_cookie(SID_COOKIE, new_sid, httponly=True, samesite="strict", path="/")
            return resp

        return endpoint

    async def _csrf_ok(self, request: Request, sid: str) -> bool:
        if not same_origin(request.headers.get("origin"), request.headers.get("host")):
            return False
        given = request.headers.get("x-csrf-token")
        if given is None:
            form = await request.form()
            value = form.get("csrf")
            given = value if isinstance(value, str) else None
        return self.auth.csrf_ok(sid, given)

    def page(self, request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
        sid = getattr(request.state, "sid", "")
        ctx = {"request": request, "csrf": self.auth.csrf_for(sid) if sid else "",
               "signed_in": self.auth.token is not None and self.auth.signed_in(sid),
               "token_required": self.auth.token is not None, "home": str(self.backend.home.root),
               "nav": name.split(".")[0], "provider_problem": self.backend.provider_problem, **context}
        return self.templates.TemplateResponse(request, name, ctx, status_code=status)

    @staticmethod
    def json(data: Any, status: int = 200) -> Response:
        return Response(json.dumps(data, ensure_ascii=False, default=str), status_code=status,
                        media_type="application/json")

    # -- sign-in --------------------------------------------------------------------------------
    async def login_form(self, request: Request) -> Response:
        if self.auth.token is None or self.auth.signed_in(request.state.sid):
            return RedirectResponse("/", status_code=303)
        return self.page(request, "login.html", {"title": "Sign in", "error": ""})

    async def login(self, request: Request) -> Response:
        form = await request.form()
        given = form.get("token")
        if self.auth.token is None:
            return RedirectResponse("/", status_code=303)
        if not isinstance(given, str) or not self.auth.token_ok(given):
            await anyio.sleep(0.2)  # blunt guessing a little; the token itself is compared in constant time
            return self.page(request, "login.html", {"title": "Sign in", "error": "That is not the token this "
                             "server was started with."}, status=401)
        self.auth.sign_out(request.state.sid)
        resp = RedirectResponse("/", status_code=303)
        resp.set_cookie(SID_COOKIE, self.auth.sign_in(), httponly=True, samesite="strict", path="/")
        return resp

    async def logout(self, request: Request) -> Response:
        self.auth.sign_out(request.state.sid)
        resp = RedirectResponse("/login" if self.auth.token else "/", status_code=303)
        resp.delete_cookie(SID_COOKIE, path="/", httponly=True, samesite="strict")
        return resp

    # -- memory ---------------------------------------------------------------------------------
    def _memory_context(self, request: Request, user: str | None, result: dict[str, Any] | None = None,
                        attempted: dict[str, Any] | None = None) -> dict[str, Any]:
        b = self.backend
        view = b.memory_view(user)
        snap_id = request.query_params.get("snapshot") or ""
        sessions = b.snapshot_sessions()
        clients = b.client_snapshots()
        if not snap_id and sessions:
            snap_id = sessions[0]["id"]
        client = next((c for c in clients if "mcp:" + c["key"] == snap_id), None)
        if client is not None:
            frozen: str | None = client["snapshot"] or "(both stores were empty)"
            frozen_label: dict[str, Any] | None = {"id": snap_id, "title": f"MCP client session {client['key'][:8]}",
                                                   "started_at": client["started_at"]}
        else:
            frozen = b.session_snapshot(snap_id) if snap_id else None
            frozen_label = next((s for s in sessions if s["id"] == snap_id), None)
        shown, live = (frozen or view["started_snapshot"]).strip(), view["live_snapshot"].strip()
        # A session's prompt may carry the external provider's block after the memory blocks.
        same = shown == live or (bool(live) and shown.startswith(live + "\n\n"))
        return {"snapshot_same": same, "title": "Memory", "view": view, "result": result, "attempted": attempted or {},
                "snap_sessions": sessions, "snap_clients": clients, "snap_id": snap_id, "frozen": frozen, "frozen_session": frozen_label,
                "dashboard_started": b.started_at}

    def _user_param(self, value: Any) -> str | None:
        text = str(value or "").strip()
        return text or None

    async def memory_page(self, request: Request) -> Response:
        user = self._user_param(request.query_params.get("user"))
        try:
            ctx = await run_in_threadpool(self._memory_context, request, user)
        except ValueError as exc:
            return self.page(request, "error.html", {"title": "Unknown user", "message": f"user {user!r}: {exc}"},
                             status=400)
        return self.page(request, "memory.html", ctx)

    async def memory_post(self, request: Request) -> Response:
        form = await request.form()
        user = self._user_param(form.get("user"))
        args = {k: (str(form[k]) if form.get(k) is not None else None)
                for k in ("action", "target", "content", "old_text")}
        result = await run_in_threadpool(self.backend.memory_write, user, args)
        try:
            ctx = await run_in_threadpool(self._memory_context, request, user, result,
                                          args if not result.get("success") else None)
        except ValueError as exc:
            return self.page(request, "error.html", {"title": "Unknown user", "message": f"user {user!r}: {exc}"},
                             status=400)
        return self.page(request, "memory.html", ctx, status=200 if result.get("success") else 422)

    async def api_memory(self, request: Request) -> Response:
        user = self._user_param(request.query_params.get("user"))
        try:
            view = await run_in_threadpool(self.backend.memory_view, user)
        except ValueError as exc:
            return self.json({"error": f"user {user!r}: {exc}"}, 400)
        return self.json(view)

    # -- sessions -------------------------------------------------------------------------------
    def _int(self, value: Any, default: int = 1) -> int:
        try:
            return int(value)
        except (TypeError, ValueError):
            return default

    async def sessions_page(self, request: Request) -> Response:
        f = SessionFilter.from_query(request.query_params)
        page = self._int(request.query_params.get("page"))
        listing, options = await run_in_threadpool(
            lambda: (self.backend.list_sessions(f, page), self.backend.filter_options()))
        query = {k: v for k, v in f.as_dict().items() if v}
        return self.page(request, "sessions.html", {"title": "Sessions", "listing": listing, "options": options,
                                                    "f": f, "query": query,
                                                    "deleted": request.query_params.get("deleted", "")})

    async def api_sessions(self, request: Request) -> Response:
        f = SessionFilter.from_query(request.query_params)
        listing = await run_in_threadpool(self.backend.list_sessions, f, self._int(request.query_params.get("page")))
        return self.json({**listing, "errors": f.errors})

    async def search_page(self, request: Request) -> Response:
        # not cut here: session_search searches the first 2,048 characters and its note says so
        q = (request.query_params.get("q") or "").strip()
        source = (request.query_params.get("source") or "").strip() or None
        result = await run_in_threadpool(self.backend.search, q, source) if q else None
        options = await run_in_threadpool(self.backend.filter_options)
        return self.page(request, "search.html", {"title": "Search", "q": q, "source": source or "",
                                                  "result": result, "options": options})

    async def api_search(self, request: Request) -> Response:
        q = (request.query_params.get("q") or "").strip()  # cut, with a note, by session_search
        if not q:
            return self.json({"success": False, "error": "pass ?q=words to search"}, 400)
        return self.json(await run_in_threadpool(self.backend.search, q,
                                                 (request.query_params.get("source") or "").strip() or None))

    async def session_route(self, request: Request) -> Response:
        """``/sessions/<id>[/export|/delete]``: the id read by :func:`session_path`, then the page."""
        found = session_path(request.scope, "/sessions/")
        if found is None:
            return await self.not_found(request)
        request.scope["path_params"] = {"sid": found[0]}
        if request.method == "POST":
            if found[1] == "delete":
                return await self.session_delete(request)
            return self.page(request, "error.html", {"title": "Not allowed", "message": (
                "Only a session's delete form posts here.")}, status=405)
        handler = {"": self.session_page, "export": self.session_export, "delete": self.session_delete_form}
        return await handler[found[1]](request)

    async def session_page(self, request: Request) -> Response:
        sid = request.path_params["sid"]
        detail = await run_in_threadpool(self.backend.session_detail, sid, self._int(request.query_params.get("page")))
        if detail is None:
            return self.page(request, "error.html", {"title": "No such session",
                                                     "message": f"No session {sid!r} in this home."}, status=404)
        hit = self._int(request.query_params.get("hit"), 0)
        return self.page(request, "session.html", {"title": detail["session"].get("title") or sid, "d": detail,
                                                   "hit": hit})

    async def api_session(self, request: Request) -> Response:
        found = session_path(request.scope, "/api/sessions/")
        if found is None or found[1]:
            return self.json({"error": "no such API path"}, 404)
        sid = found[0]
        detail = await run_in_threadpool(self.backend.session_detail, sid, self._int(request.query_params.get("page")))
        if detail is None:
            return self.json({"error": f"no session {sid!r}"}, 404)
        return self.json(detail)

    async def session_export(self, request: Request) -> Response:
        sid = request.path_params["sid"]
        data = await run_in_threadpool(self.backend.export_session, sid)
        if data is None:
            return self.json({"error": f"no session {sid!r}"}, 404)
        safe = "".join(c for c in sid if c.isalnum() or c in "-_")[:80] or "session"
        return Response(json.dumps(data, ensure_ascii=False, indent=2, default=str), media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="session-{safe}.json"'})

    async def session_delete_form(self, request: Request) -> Response:
        sid = request.path_params["sid"]
        s = await run_in_threadpool(self.backend.db.get_session, sid)
        if s is None:
            return self.page(request, "error.html", {"title": "No such session",
                                                     "message": f"No session {sid!r} in this home."}, status=404)
        return self.page(request, "delete.html", {"title": "Delete session", "s": s,
                                                  "count": await run_in_threadpool(self.backend.db.message_count, sid)})

    async def session_delete(self, request: Request) -> Response:
        sid = request.path_params["sid"]
        form = await request.form()
        if form.get("confirm") != sid:
            return self.page(request, "error.html", {"title": "Not deleted", "message": (
                "Tick the confirmation box to delete the session. Nothing was deleted.")}, status=400)
        deleted = await run_in_threadpool(self.backend.delete_session, sid)
        if not deleted:
            return self.page(request, "error.html", {"title": "No such session",
                                                     "message": f"No session {sid!r} in this home."}, status=404)
        return RedirectResponse("/sessions?" + urlencode({"deleted": sid}), status_code=303)

    # -- insights and providers -----------------------------------------------------------------
    async def insights_page(self, request: Request) -> Response:
        data = await run_in_threadpool(self.backend.insights)
        rows = [(str(s["source"]), int(s["sessions"])) for s in data["sources"]]
        return self.page(request, "insights.html", {"title": "Insights", "i": data, "sources_rows": rows})

    async def api_insights(self, request: Request) -> Response:
        return self.json(await run_in_threadpool(self.backend.insights))

    async def providers_page(self, request: Request) -> Response:
        data = await run_in_threadpool(self.backend.providers)
        return self.page(request, "providers.html", {"title": "Providers", "p": data})

    async def api_providers(self, request: Request) -> Response:
        return self.json(await run_in_threadpool(self.backend.providers))

    async def not_found(self, request: Request) -> Response:
        return self.page(request, "error.html", {"title": "Not found", "message": "There is no such page."},
                         status=404)

    # -- app ------------------------------------------------------------------------------------
    def routes(self) -> list[Any]:
        g = self.guard
        return [
            Route("/", g(self.memory_page)),
            Route("/memory", g(self.memory_page)),
            Route("/memory", g(self.memory_post), methods=["POST"]),
            Route("/login", g(self.login_form, public=True)),
            Route("/login", g(self.login, public=True), methods=["POST"]),
            Route("/logout", g(self.logout, public=True), methods=["POST"]),
            Route("/sessions", g(self.sessions_page)),
            Route("/sessions/search", g(self.search_page)),
            Route("/sessions/{rest:path}", g(self.session_route), methods=["GET", "POST"]),
            Route("/insights", g(self.insights_page)),
            Route("/providers", g(self.providers_page)),
            Route("/api/memory", g(self.api_memory, api=True)),
            Route("/api/sessions", g(self.api_sessions, api=True)),
            Route("/api/search", g(self.api_search, api=True)),
            Route("/api/sessions/{rest:path}", g(self.api_session, api=True)),
            Route("/api/insights", g(self.api_insights, api=True)),
            Route("/api/providers", g(self.api_providers, api=True)),
            Mount("/static", app=_Static(StaticFiles(directory=str(HERE / "static"))), name="static"),
        ]

    def app(self) -> Starlette:
        app = Starlette(routes=self.routes())

        async def not_found(request: Request, exc: Exception) -> Response:
            return await self.guard(self.not_found, public=True)(request)

        app.add_exception_handler(404, not_found)
        return app


class _Static:
    """Static files with the same security headers as the pages."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()
                            if k != "Cache-Control"]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BesideMcp:
    """One ASGI app: the MCP endpoint at ``mcp_path`` (and below it), the dashboard everywhere else.

    Lifespan events go to the MCP app (its session manager runs there). The dashboard is wrapped in
    the same Host/Origin checks the MCP endpoint applies (:class:`~hermes_memory.httpguard.HostOriginGuard`).
    """

    def __init__(self, mcp_app: Any, web_app: Any, *, host: str, mcp_path: str) -> None:
        self.mcp_app = mcp_app
        self.web_app = HostOriginGuard(web_app, host)
        self.mcp_path = mcp_path.rstrip("/")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "lifespan" or path == self.mcp_path or path.startswith(self.mcp_path + "/"):
            await self.mcp_app(scope, receive, send)
        else:
            await self.web_app(scope, receive, send)


def dashboard_app(server: Any, *, host: str, token: str | None,
                  provider_problem: ProviderProblem | None = None) -> Any:
    """The dashboard alone (``hermes-memory ui``) over ``server``'s layers, behind the Host/Origin checks.

    ``provider_problem``: the configured provider failed to load and ``server`` runs without it;
    every page then says so (see :class:`~hermes_memory.web.data.ProviderProblem`)."""
    return HostOriginGuard(Dashboard(Backend(server, provider_problem), token=token).app(), host)


def mount_beside_mcp(server: Any, mcp_app: Any, *, host: str, token: str | None, mcp_path: str) -> Any:
    """``mcp_app`` (from :meth:`MemoryServer.http_app`) with the dashboard mounted at ``/`` beside it."""
    return BesideMcp(mcp_app, Dashboard(Backend(server), token=token).app(), host=host, mcp_path=mcp_path)
