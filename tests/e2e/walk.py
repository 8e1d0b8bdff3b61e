"""One walk through every page of the navigation in Italian, shared by the browser tests that only read it.

Four tests each went through every page in Italian from the sidebar's links, scrolled to its end,
only to read what was drawn: axe's WCAG rules at 1400 x 900 (test_accessibility.py), the charts'
accessible names on lesson 1 and the attention lesson (test_accessibility.py), no sideways scroll
on a phone and a tablet (test_accessibility.py) and no chart text overlapping or overflowing on a
laptop and a phone (test_chart_layout.py). Opening a page costs Chromium 6-10 s of drawing, so
they now share one walk: one session, one visit per page, and at each page every size in turn,
each scrolled to its end at that size (every chart drawn on approach drawn), measured there.

- `italian(browser, app_url) -> Walk`: the walk, as plain data (see `Walk`). The `italian_walk`
  fixture (tests/e2e/conftest.py) runs it once per session, when the first test asks.

The order at each page: 1400 x 900 (axe, the charts' names, the page's text, the charts' layout on
a laptop), then 390 x 844 and 768 x 1024; back to 1400 x 900 before the next page's link. Nothing is clicked but the sidebar's
links and nothing is typed: the page is only read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lib.course import i18n
from drivers import axe
from tests.e2e import chart_boxes
from drivers.browser import CHARTS, SERVER_WARM_TIMEOUT_MS, goto, offline_page

# Resolves once every visible chart's box and text boxes stay put over four frames, or after
# `timeout` ms (REST_MS: a chart that keeps moving is measured as it is; the checks report it).
REST_MS = 10_000
_CHARTS_AT_REST = """(timeout) => new Promise(resolve => {
  const shape = () => [...document.querySelectorAll('.js-plotly-plot')].filter(c => c.checkVisibility())
    .map(c => [c, ...c.querySelectorAll('svg text')].map(e => {
      const r = e.getBoundingClientRect();
      return [r.left, r.top, r.width, r.height].map(Math.round).join(',');
    }).join(';')).join('|');
  const end = performance.now() + timeout;
  let last = shape(), still = 0;
  const frame = () => requestAnimationFrame(() => requestAnimationFrame(() => {
    const now = shape();
    still = now === last ? still + 1 : 0;
    last = now;
    if (still >= 2 || performance.now() > end) resolve(); else frame();
  }));
  frame();
})"""

SIZES = {"laptop": (1400, 900), "phone": (390, 844), "tablet": (768, 1024)}
READ = "laptop"  # the size at which axe, the charts' names and the page's text are read (the first)
NAMED = ("", "attention")  # the pages whose charts' accessible names are read


@dataclass
class Walk:
    """What the walk found, by page path ("" is lesson 1) and size name (see `SIZES`).

    - `axe`: axe's WCAG 2.1 A/AA violations at 1400 x 900, keyed "it/<page id>" as axe.survey keys
      them; empty when static/vendor/axe.min.js is missing.
    - `charts[(path, size)]`: the charts drawn; `clashes[(path, size)]`: chart_boxes.clashes.
    - `sideways[(path, size)]`: axe.sideways (px the document and the main container scroll sideways).
    - `names[path]` (for `NAMED`): the visible charts' aria-labels at 1400 x 900, and the role or
      accessible-name checks that failed (Playwright's own computed role and name).
    - `texts[path]`: the page's whole text (`document.body.innerText`) at 1400 x 900, scrolled to its
      end (every section computed on approach drawn).
    - `external`: requests the page tried outside this machine (all aborted).
    """

    external: list[str] = field(default_factory=list)
    axe: dict[str, list[dict]] = field(default_factory=dict)
    charts: dict[tuple[str, str], int] = field(default_factory=dict)
    clashes: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    sideways: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    names: dict[str, dict] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)


def _chart_names(page) -> dict:
    """Every visible chart: a figure with an accessible name of a word or more (its aria-label kept)."""
    import re

    from playwright.sync_api import expect

    charts = page.locator(CHARTS)
    shown = [charts.nth(i) for i in range(charts.count()) if charts.nth(i).evaluate("e => e.checkVisibility()")]
    names, problems = [], []
    for chart in shown:
        try:
            expect(chart).to_have_role("figure")
            expect(chart).to_have_accessible_name(re.compile(r"\w{4,}"))
        except AssertionError as e:
            problems.append(str(e))
        names.append(chart.get_attribute("aria-label"))
    return {"names": names, "problems": problems}


def italian(browser, app_url: str, timeout: int = SERVER_WARM_TIMEOUT_MS) -> Walk:
    """Walk every page in Italian once (see the module's docstring); a lesson's first visit on this
    server computes it, hence the warm-up's timeout."""
    walk = Walk()
    with_axe = axe.vendored()
    width, height = SIZES[READ]
    with offline_page(browser, None, external=walk.external, viewport={"width": width, "height": height}) as page:
        goto(page, f"{app_url}/?lang=it", i18n.ui("it")["lesson.numbers.title"], timeout=timeout)
        for i, path in enumerate(axe.pages()):
            if i:
                page.set_viewport_size({"width": width, "height": height})
                axe.visit(page, i, timeout)
            for name, (w, h) in SIZES.items():
                page.set_viewport_size({"width": w, "height": h})
                axe.scroll_to_end(page, timeout)
                # plotly redraws a chart whose box changed width, then again for its automatic
                # margins: on a busy machine that takes several frames. Measured once the charts'
                # text boxes stay where they are from one frame to the next.
                page.evaluate(_CHARTS_AT_REST, min(timeout, REST_MS))
                if name == READ:
                    if with_axe:
                        walk.axe[f"it/{path or axe.nav_first()}"] = axe.violations(page)
                    if path in NAMED:
                        walk.names[path] = _chart_names(page)
                    walk.texts[path] = page.evaluate("() => document.body.innerText")
                walk.charts[path, name] = chart_boxes.chart_count(page)
                walk.clashes[path, name] = chart_boxes.clashes(page)
                walk.sideways[path, name] = axe.sideways(page)
    return walk
