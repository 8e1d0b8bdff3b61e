"""The course on a phone with a touch screen (390 x 844, touch, no hover), in the real browser.

One learner walks every page in Italian from the sidebar's links, scrolled to its end, and finds:
- plotly's mode bar (always shown on a touch screen, since nothing can hover) covering no text
  of its chart: no title, subplot title, legend or axis label under its buttons;
- every table of words (ui.shell.styles.table) with its headers and cells whole, never cut with "…";
  a table wider than the phone scrolls sideways in its own box, says so in a line under it, and
  scrolled to its end shows its last column;
- a number asked by a quiz typed on the phone's number keyboard (`inputmode="decimal"`);
- a token chip of the sampling lesson showing its numbers when tapped (a phone has no hover).
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers import axe
from drivers.browser import SERVER_WARM_TIMEOUT_MS, frames, goto, offline_page, settle

pytestmark = pytest.mark.e2e

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True, "device_scale_factor": 2}
SLACK = 2  # px: boxes that only touch do not cover each other
TABLES = {"": 2, "attention": 1, "compare": 1}  # the tables of words each page shows (the head's patterns are its view's)

# For each chart whose mode bar shows: the chart's text boxes its buttons cover (hover labels, which
# appear on demand, and heatmap cell labels, drawn inside the data, aside).
_UNDER_MODEBAR = """(slack) => {
  const out = [];
  for (const chart of document.querySelectorAll('.js-plotly-plot')) {
    if (!chart.checkVisibility()) continue;
    const groups = [...chart.querySelectorAll('.modebar-group')]
      .filter(g => g.checkVisibility({opacityProperty: true, visibilityProperty: true}) && parseFloat(getComputedStyle(g).opacity) > 0);
    if (!groups.length) continue;
    const name = chart.closest('[class*="st-key-"]')?.className.match(/st-key-([^ ]+)/)?.[1] || 'a chart';
    for (const g of groups) {
      const m = g.getBoundingClientRect();
      if (m.width < 1 || m.height < 1) continue;
      for (const el of chart.querySelectorAll('svg text')) {
        if (el.closest('.hoverlayer, .hm, .textpoint, .heatmaplayer')) continue;
        const s = (el.textContent || '').trim();
        if (!s || !el.checkVisibility({opacityProperty: true, visibilityProperty: true})) continue;
        const r = el.getBoundingClientRect();
        const w = Math.min(r.right, m.right) - Math.max(r.left, m.left);
        const h = Math.min(r.bottom, m.bottom) - Math.max(r.top, m.top);
        if (w > slack && h > slack) out.push(`${name}: the mode bar covers «${s}» (${Math.round(w)} x ${Math.round(h)} px)`);
      }
    }
  }
  return out;
}"""

# Every table of words on the page: its cells cut short, whether it is wider than its box, the
# cue line under it, and its last column once its box is scrolled to the end.
_TABLES = """() => [...document.querySelectorAll('[class*="st-key-itt_table-"]')].filter(h => h.checkVisibility()).map(holder => {
  const name = holder.className.match(/st-key-([^ ]+)/)[1];
  const table = holder.querySelector('[data-testid="stTable"]');
  const cells = [...table.querySelectorAll('th, td')];
  const cut = cells.filter(c => c.scrollWidth > c.clientWidth + 1 || getComputedStyle(c).textOverflow === 'ellipsis')
    .map(c => c.textContent.trim());
  const scroller = [table, ...table.querySelectorAll('div')].find(e => /(auto|scroll)/.test(getComputedStyle(e).overflowX));
  const wide = scroller.scrollWidth > scroller.clientWidth + 1;
  const cue = holder.querySelector('[class*="st-key-itt_cue-"]');
  scroller.scrollLeft = scroller.scrollWidth;
  const box = scroller.getBoundingClientRect();
  const heads = [...table.querySelectorAll('thead th')];
  const last = heads[heads.length - 1].getBoundingClientRect();
  const shown = last.left >= box.left - 1 && last.right <= box.right + 1;
  scroller.scrollLeft = 0;
  return {name, cut, wide, cue: !!cue && cue.checkVisibility(), shown, focusable: scroller.tabIndex >= 0,
          page: document.documentElement.scrollWidth <= innerWidth + 1};
})"""


@pytest.fixture
def phone(browser, request):
    """A phone's page (touch, no hover) whose requests outside this machine are aborted and fail the test."""
    with offline_page(browser, request, **PHONE) as pg:
        yield pg


def test_a_phone_reads_every_page_whole(phone, app_url):
    from playwright.sync_api import expect

    page = phone
    it = i18n.ui("it")
    assert page.evaluate("() => matchMedia('(hover: none)').matches")  # a touch screen, as a phone's
    goto(page, f"{app_url}/?lang=it", it["lesson.numbers.title"], timeout=SERVER_WARM_TIMEOUT_MS)
    covered, problems, tables, pages_with_bar = [], [], {}, 0
    for i, path in enumerate(axe.pages()):
        if i:
            axe.visit(page, i, SERVER_WARM_TIMEOUT_MS)
        axe.scroll_to_end(page, SERVER_WARM_TIMEOUT_MS)
        frames(page)
        where = path or "numbers"
        covered += [f"{where}: {c}" for c in page.evaluate(_UNDER_MODEBAR, SLACK)]
        pages_with_bar += page.evaluate("() => document.querySelectorAll('.js-plotly-plot .modebar-group').length > 0")
        found = page.evaluate(_TABLES)
        tables[path] = len(found)
        for t in found:
            if t["cut"]:
                problems.append(f"{where}/{t['name']}: cut short: {t['cut']}")
            if t["wide"] and not (t["cue"] and t["shown"] and t["focusable"]):
                problems.append(f"{where}/{t['name']}: wider than the phone without its cue, its last column or a Tab stop: {t}")
            if not t["wide"] and t["cue"]:
                problems.append(f"{where}/{t['name']}: says it scrolls sideways but fits")
            if not t["page"]:
                problems.append(f"{where}: the page itself scrolls sideways")
        if path == "":
            # A number asked by the quiz: the phone offers its number keyboard.
            answers = page.locator('[class*="st-key-itt_decimal-"] input[type="text"]')
            assert answers.count() >= 1
            assert set(answers.evaluate_all("es => es.map(e => e.getAttribute('inputmode'))")) == {"decimal"}
        if path == "sampling":
            # A tap on a token of the surprise chips shows its numbers under it.
            # (worked out when the learner reaches it: ui.views.follow)
            page.locator(".st-key-sampling-loss_box").scroll_into_view_if_needed()
            chip = page.locator(".loss-chips .itt-tip").nth(1)
            expect(chip).to_be_attached(timeout=SERVER_WARM_TIMEOUT_MS)
            settle(page)
            chip.scroll_into_view_if_needed()
            chip.tap()
            expect(chip).to_be_focused()
            tip = chip.evaluate("c => getComputedStyle(c, '::after').content")
            assert chip.get_attribute("title") and chip.get_attribute("title") in tip
    assert pages_with_bar >= 5  # the walk saw pages of charts with their mode bar
    assert not covered, "\n".join(covered)
    assert {p: tables.get(p, 0) for p in TABLES} == TABLES
    assert not problems, "\n".join(problems)
