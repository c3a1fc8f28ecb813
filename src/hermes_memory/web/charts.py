"""Charts as server-rendered inline SVG: no JavaScript, no network, nothing third-party.

Every function returns :class:`markupsafe.Markup` (safe to put into a template as it is): all
text in it (labels, titles) is escaped here, numbers are formatted here. Colours come from CSS
classes (``c-cached``, ``c-uncached``, ``c-output``, ``c-memory``, ``c-user``, ``c-bar``) so
the style sheet decides them; no ``style`` attribute is used (the Content-Security-Policy
allows no inline styles).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup, escape


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def human(n: float) -> str:
    """``1234567`` -> ``"1.2M"``; ``1234`` -> ``"1.2k"``; small numbers as they are."""
    n = float(n)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= limit:
            return f"{n / limit:.1f}{suffix}"
    return f"{int(n)}"


def usage_bar(chars: int, limit: int, *, label: str, fill_class: str | None = None) -> Markup:
    """A horizontal bar of ``chars`` used out of ``limit`` (over the limit: full, marked ``over``).

    ``fill_class``: the CSS class of the filled part (default: by how full it is)."""
    width, height = 300, 14
    frac = min(1.0, chars / limit) if limit else 0.0
    over = chars > limit
    cls = fill_class or ("bar-over" if over else ("bar-high" if frac >= 0.8 else "bar-fill"))
    title = f"{label}: {chars:,}/{limit:,} chars"
    return Markup(
        f'<svg class="usage" viewBox="0 0 {width} {height}" preserveAspectRatio="none" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<rect class="bar-track" x="0" y="0" width="{width}" height="{height}" rx="3"/>'
        f'<rect class="{cls}" x="0" y="0" width="{_n(frac * width)}" height="{height}" rx="3"/></svg>'
    )


def stacked_bars(rows: Sequence[dict[str, Any]], keys: Sequence[tuple[str, str, str]], *, label_key: str,
                 title: str) -> Markup:
    """Vertical stacked bars, one per row; ``keys``: ``(field, css class, legend text)`` bottom up.

    Each bar has a ``<title>`` tooltip with its numbers. An all-zero series draws an empty frame
    with "no data".
    """
    width, height, left, bottom, top = 720, 250, 70, 40, 14
    plot_w, plot_h = width - left - 8, height - bottom - top
    totals = [sum(int(r.get(k, 0) or 0) for k, _, _ in keys) for r in rows]
    peak = max(totals, default=0)
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
             f'<title>{escape(title)}</title>']
    parts.append(f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{width - 8}" y2="{top + plot_h}"/>')
    if peak:
        for frac in (0.5, 1.0):
            y = top + plot_h - frac * plot_h
            parts.append(f'<line class="grid" x1="{left}" y1="{_n(y)}" x2="{width - 8}" y2="{_n(y)}"/>'
                         f'<text class="tick" x="{left - 4}" y="{_n(y + 4)}" text-anchor="end">{human(peak * frac)}</text>')
    else:
        parts.append(f'<text class="empty" x="{width / 2}" y="{height / 2}" text-anchor="middle">no data</text>')
    n = max(1, len(rows))
    slot = plot_w / n
    bar = max(1.0, slot * 0.7)
    for i, r in enumerate(rows):
        x = left + i * slot + (slot - bar) / 2
        y = top + plot_h
        tip = [str(r.get(label_key, ""))] + [f"{legend}: {int(r.get(k, 0) or 0):,}" for k, _, legend in keys]
        parts.append(f'<g class="bar"><title>{escape(" · ".join(tip))}</title>')
        for k, cls, _ in keys:
            v = int(r.get(k, 0) or 0)
            if not v or not peak:
                continue
            h = v / peak * plot_h
            y -= h
            parts.append(f'<rect class="{cls}" x="{_n(x)}" y="{_n(y)}" width="{_n(bar)}" height="{_n(h)}"/>')
        parts.append("</g>")
        if n <= 12 or i % max(1, n // 6) == 0 or i == n - 1:
            last = i == n - 1 and n > 1  # the right-most label ends at its bar, inside the frame
            parts.append(f'<text class="tick" x="{_n(x + bar if last else x + bar / 2)}" y="{height - bottom + 26}" '
                         f'text-anchor="{"end" if last else "middle"}">{escape(str(r.get(label_key, ""))[5:])}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def legend(keys: Sequence[tuple[str, str, str]]) -> Markup:
    """A legend for :func:`stacked_bars` / :func:`lines` (``(field, css class, text)``)."""
    items = "".join(f'<li><svg viewBox="0 0 10 10" class="swatch"><rect class="{cls}" width="10" height="10"/></svg>'
                    f"{escape(text)}</li>" for _, cls, text in keys)
    return Markup(f'<ul class="legend">{items}</ul>')


def hbars(rows: Sequence[tuple[str, int]], *, title: str) -> Markup:
    """Horizontal bars with a label and a count each (e.g. sessions per source)."""
    row_h, label_w, width = 32, 170, 720
    height = max(1, len(rows)) * row_h + 8
    peak = max((v for _, v in rows), default=0)
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
             f'<title>{escape(title)}</title>']
    if not rows:
        parts.append(f'<text class="empty" x="{width / 2}" y="{height / 2 + 4}" text-anchor="middle">no data</text>')
    for i, (name, v) in enumerate(rows):
        y = 4 + i * row_h
        w = (v / peak) * (width - label_w - 70) if peak else 0
        parts.append(f'<g><title>{escape(name)}: {v:,}</title>'
                     f'<text class="label" x="{label_w - 6}" y="{y + 21}" text-anchor="end">{escape(name[:20])}</text>'
                     f'<rect class="c-bar" x="{label_w}" y="{y + 5}" width="{_n(w)}" height="{row_h - 10}"/>'
                     f'<text class="tick" x="{_n(label_w + w + 6)}" y="{y + 21}">{v:,}</text></g>')
    parts.append("</svg>")
    return Markup("".join(parts))


def lines(points: Sequence[dict[str, Any]], *, series: Sequence[tuple[str, str, str]], title: str) -> Markup:
    """Percent-of-limit over time, one polyline per ``series`` (``(target, css class, legend)``).

    ``points``: ``{"t" (epoch s), "target", "percent", "chars", "limit"}``. The y axis is 0..100 %
    (the limit); points over the limit are drawn at the top.
    """
    width, height, left, bottom, top = 720, 230, 70, 34, 14
    plot_w, plot_h = width - left - 10, height - bottom - top
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
             f'<title>{escape(title)}</title>']
    for pct in (0, 50, 100):
        y = top + plot_h - pct / 100 * plot_h
        parts.append(f'<line class="grid" x1="{left}" y1="{_n(y)}" x2="{width - 10}" y2="{_n(y)}"/>'
                     f'<text class="tick" x="{left - 4}" y="{_n(y + 4)}" text-anchor="end">{pct}%</text>')
    ts = [float(p["t"]) for p in points]
    if not ts:
        parts.append(f'<text class="empty" x="{width / 2}" y="{height / 2}" text-anchor="middle">no data</text>')
    else:
        t0, t1 = min(ts), max(ts)
        span = (t1 - t0) or 1.0

        def xy(p: dict[str, Any]) -> tuple[float, float]:
            x = left + (float(p["t"]) - t0) / span * plot_w if t1 > t0 else left + plot_w
            y = top + plot_h - min(100, max(0, int(p["percent"]))) / 100 * plot_h
            return x, y

        for target, cls, name in series:
            pts = [p for p in points if p["target"] == target]
            if not pts:
                continue
            coords = " ".join(f"{_n(x)},{_n(y)}" for x, y in map(xy, pts))
            parts.append(f'<polyline class="line {cls}" points="{coords}"/>')
            for p in pts:
                x, y = xy(p)
                when = datetime.fromtimestamp(float(p["t"]), tz=UTC).strftime("%Y-%m-%d %H:%M")
                tip = f'{name} {when} UTC: {int(p["chars"]):,}/{int(p["limit"]):,} chars ({int(p["percent"])}%)'
                parts.append(f'<circle class="dot {cls}" cx="{_n(x)}" cy="{_n(y)}" r="3"><title>{escape(tip)}</title></circle>')
        for t, anchor, x in ((t0, "start", left), (t1, "end", width - 10)):
            day = datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d")
            parts.append(f'<text class="tick" x="{x}" y="{height - 8}" text-anchor="{anchor}">{day}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
