"""Figures that fit their box, in the real browser, on a laptop (1400 x 900) and a phone (390 x 844).

- The attention lesson's overview of every head: the drawn thumbnails fill the chart's plot area
  (not its top third with grey below), and the plot area is tall enough to read on a phone.
- bertviz's head view (lesson 1 and the attention lesson): the frame is as wide as the page's
  column, its drawing sits in the middle of it, and the last token of the text is inside the
  frame's visible area (the frame is as tall as its tokens need), for the longest text shown.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers import axe
from drivers.browser import APP_TIMEOUT_MS, SERVER_WARM_TIMEOUT_MS, click, frames, goto, settle, type_text

pytestmark = pytest.mark.e2e

SIZES = {"laptop": (1400, 900), "phone": (390, 844)}
# More tokens than either lesson shows in bertviz (40 and 48): the frame is at its tallest.
LONG = " ".join(["Il gatto si è seduto sul tappeto perché era stanco."] * 8)

_PLOT_FILL = """(chart) => {
  const area = chart.querySelector('rect.nsewdrag').getBoundingClientRect();  // the plot area
  const img = chart.querySelector('.heatmaplayer image').getBoundingClientRect();
  const w = Math.min(img.right, area.right) - Math.max(img.left, area.left);
  const h = Math.min(img.bottom, area.bottom) - Math.max(img.top, area.top);
  return {area_w: area.width, area_h: area.height, fill_w: w / area.width, fill_h: h / area.height};
}"""

_FRAME_FIT = """() => {
  const rows = side => [...document.querySelectorAll(`#vis svg #${side} text`)];
  const last = [...rows('left'), ...rows('right')].map(t => t.getBoundingClientRect().bottom);
  const svg = document.querySelector('#vis svg').getBoundingClientRect();
  return {tokens: rows('right').length, last: Math.max(...last), height: innerHeight, width: innerWidth,
          scroll: document.documentElement.scrollHeight, left: svg.left, right: innerWidth - svg.right};
}"""


def _redrawn(page) -> None:
    """plotly (and the frame) lay out again on the next animation frames after a resize."""
    frames(page)
    settle(page)


def _frame_fits(frame_el, expect_tokens: int, where: str) -> None:
    """bertviz's frame `frame_el` (a locator), drawn with `expect_tokens` tokens, fits (see above)."""
    frame_el.scroll_into_view_if_needed()
    frame = frame_el.element_handle(timeout=APP_TIMEOUT_MS).content_frame()
    frame.wait_for_function(f"() => document.querySelectorAll('#vis svg #right text').length === {expect_tokens}",
                            timeout=APP_TIMEOUT_MS)
    fit = frame.evaluate(_FRAME_FIT)
    # The whole drawing is inside the frame: the last token's letters end above the frame's bottom,
    # and nothing below it is cut off (the document is no taller than the frame).
    assert fit["last"] <= fit["height"], (where, fit)
    assert fit["scroll"] <= fit["height"] + 1, (where, fit)
    # The frame takes the column's width, and the drawing is in its middle, not at its left.
    column = frame_el.evaluate("f => f.closest('[data-testid=\"stVerticalBlock\"]').getBoundingClientRect().width")
    assert fit["width"] >= 0.95 * column, (where, fit, column)
    assert abs(fit["left"] - fit["right"]) <= 20, (where, fit)


def test_the_overview_of_every_head_fills_its_box(page, app_url):
    from playwright.sync_api import expect

    it = i18n.ui("it")
    page.set_viewport_size({"width": 1400, "height": 900})
    goto(page, f"{app_url}/?lang=it", it["lesson.numbers.title"], timeout=SERVER_WARM_TIMEOUT_MS)
    axe.visit(page, axe.pages().index("attention"), SERVER_WARM_TIMEOUT_MS)
    box = page.locator(".st-key-attention-overview_box")
    box.scroll_into_view_if_needed()
    chart = page.locator(".st-key-attention-overview .js-plotly-plot")
    expect(chart.locator(".heatmaplayer image")).to_be_attached(timeout=SERVER_WARM_TIMEOUT_MS)
    for name, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        _redrawn(page)
        chart.scroll_into_view_if_needed()
        fill = chart.evaluate(_PLOT_FILL)
        assert fill["area_h"] >= 200, (name, fill)  # rows of thumbnails, not a strip
        assert fill["fill_w"] >= 0.95 and fill["fill_h"] >= 0.95, (name, fill)


def test_bertviz_shows_every_token_in_the_middle_of_a_full_width_frame(page, app_url):
    from playwright.sync_api import expect

    it = i18n.ui("it")
    page.set_viewport_size({"width": 1400, "height": 900})
    goto(page, f"{app_url}/?lang=it", it["lesson.numbers.title"], timeout=SERVER_WARM_TIMEOUT_MS)
    type_text(page, page.locator('[data-testid="stSidebar"] textarea').first, LONG, submit="Control+Enter")
    frame_el = page.locator('iframe[title="st.iframe"]').first
    expect(frame_el).to_be_attached(timeout=APP_TIMEOUT_MS)
    for name, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        _redrawn(page)
        _frame_fits(frame_el, 40, f"lesson 1 on a {name}")

    page.set_viewport_size({"width": 1400, "height": 900})
    axe.visit(page, axe.pages().index("attention"), SERVER_WARM_TIMEOUT_MS)
    toggle = page.locator(".st-key-attention-bertviz_switch").get_by_role("button", name=it["attention.bertviz.show"])
    toggle.scroll_into_view_if_needed()
    click(page, toggle)
    frame_el = page.locator('iframe[title="st.iframe"]').first
    expect(frame_el).to_be_attached(timeout=APP_TIMEOUT_MS)
    for name, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        _redrawn(page)
        _frame_fits(frame_el, 48, f"attention on a {name}")
