"""At phone width no form control sticks out of its card's content box (a long session title in the
snapshot picker once ran into the card's padding and border)."""

from __future__ import annotations

from typing import Any

OVERFLOWING = """() => {
  const out = [];
  for (const card of document.querySelectorAll('.card')) {
    const edge = card.getBoundingClientRect().right - parseFloat(getComputedStyle(card).paddingRight);
    for (const el of card.querySelectorAll('input, select, textarea, button')) {
      const r = el.getBoundingClientRect();
      if (r.width && r.right > edge + 0.5) out.push(`${el.tagName.toLowerCase()}[name=${el.name}] ${r.right} > ${edge}`);
    }
  }
  return out;
}"""


def test_no_form_control_overflows_its_card_on_a_phone(dashboard: dict[str, Any], browser: Any) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        for path in ("memory", "sessions", f"sessions/{dashboard['agent']}", "sessions/search?q=pgbouncer",
                     "insights", "providers"):
            page.goto(dashboard["url"] + path)
            assert page.evaluate(OVERFLOWING) == [], path
    finally:
        context.close()
