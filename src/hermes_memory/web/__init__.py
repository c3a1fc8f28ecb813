"""The web dashboard: memory, sessions, insights and providers of one data home, in a browser.

Served at ``/`` by ``hermes-memory serve --transport http`` (beside the MCP endpoint, same port,
token and Host/Origin checks) and on its own by ``hermes-memory ui``. A top layer beside ``cli``
and ``mcp``: it reads and writes through the same ``MemoryStore``, ``SessionDB``, tools and
provider as every other entry point and holds no memory logic of its own.

Modules: ``app`` (Starlette routes and the mount beside MCP), ``data`` (what each page shows),
``security`` (sign-in cookie, CSRF, headers), ``charts`` (inline SVG), ``templates/`` and
``static/`` (Jinja2 pages with autoescape, one style sheet, one small script). Nothing is
imported here, so ``import hermes_memory`` stays fast.
"""
