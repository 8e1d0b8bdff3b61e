"""Share this view, in the real browser.

A learner writes their own text, opens the attention lesson in Italian, picks layer 0 and head 8,
and asks for a link. The link, opened in a fresh browser context (no cookies, no local storage,
a new server session), shows the same lesson in the same language with the same text, the same
sliders and the very same heatmap (its numbers and labels, read from plotly). The same link with
a made-up and a malformed parameter opens too, with a notice naming them and no traceback.
Both contexts block and count any request that would leave this machine.
"""

from __future__ import annotations

import re

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, click, goto, offline_context, track, type_text

pytestmark = pytest.mark.e2e

TEXT = "Perché il gatto è salito sull'albero? Perché aveva visto un uccellino."
HEATMAP = '[data-testid="ittView"][data-view="attention"]'  # the browser view of the chosen layer


def _heatmap(page) -> dict:
    """What the heatmap shows: its cells (painted on the canvas over plotly's chart, common.js
    cellCanvas), its axes' token labels as plotly holds them, and its title."""
    return page.locator(HEATMAP).first.evaluate(
        "v => { const gd = v.querySelector('.js-plotly-plot');"
        " return {z: v.querySelector('canvas.itt-cells').__ittCells, x: gd.layout.xaxis.ticktext,"
        " y: gd.layout.yaxis.ticktext, title: v.querySelector('.itt-chart-title').textContent}; }")


def _fresh_page(browser, external: list[str]):
    context = offline_context(browser, external, viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    track(pg)
    return context, pg


def test_a_shared_link_opens_the_same_view_in_a_fresh_browser(page, app_url, browser):
    from playwright.sync_api import expect

    it = i18n.ui("it")
    title = it["attention.heatmap_title"]
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/?lang=it", it["lesson.numbers.title"])
    type_text(page, page.locator('[data-testid="stSidebar"] textarea').first, TEXT, submit="Control+Enter")
    click(page, page.locator('[data-testid="stSidebarNav"] a', has_text=it["lesson.attention.title"]).first)
    heatmap = page.locator(HEATMAP)
    expect(heatmap.get_by_text(i18n.fill(title, layer="15", head="0"))).to_be_visible(timeout=APP_TIMEOUT_MS)
    layer = heatmap.get_by_role("slider", name=it["attention.layer"])
    layer.focus()
    layer.press("Home")  # layer 0 was not sent: asked of the server
    expect(heatmap.get_by_text(i18n.fill(title, layer="0", head="0"))).to_be_visible(timeout=APP_TIMEOUT_MS)
    head = heatmap.get_by_role("slider", name=it["attention.head"])
    head.focus()
    head.press("End")  # answered in the browser
    expect(heatmap.get_by_text(i18n.fill(title, layer="0", head="8"))).to_be_visible(timeout=APP_TIMEOUT_MS)
    mine = _heatmap(page)

    click(page, page.locator('[data-testid="stSidebar"]').get_by_role("button", name=it["share.button"]))
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_text(it["share.title"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    box = dialog.locator('[data-testid="app.share.url"]')  # finished in the browser (static/views/link.js)
    expect(box).to_have_value(re.compile("head=8"), timeout=APP_TIMEOUT_MS)
    url = box.input_value().strip()
    assert url.startswith(f"{app_url}/attention?") and "lang=it" in url and "layer=0" in url and "head=8" in url

    external: list[str] = []
    context, fresh = _fresh_page(browser, external)
    try:
        goto(fresh, url, it["lesson.attention.title"])
        theirs = fresh.locator(HEATMAP)
        expect(theirs.get_by_text(i18n.fill(title, layer="0", head="8"))).to_be_visible(timeout=APP_TIMEOUT_MS)
        expect(fresh.locator('[data-testid="stSidebar"] textarea').first).to_have_value(TEXT)
        expect(theirs.get_by_role("slider", name=it["attention.layer"])).to_have_value("0")
        expect(theirs.get_by_role("slider", name=it["attention.head"])).to_have_value("8")
        assert _heatmap(fresh) == mine
        assert "layer=" not in fresh.url and "lang=it" in fresh.url  # the link's values left the address bar

        # The same link, with a made-up parameter and a malformed one: a notice, the rest applied.
        goto(fresh, url.replace("head=8", "head=otto") + "&zoom=3", it["lesson.attention.title"])
        notice = it["share.ignored"].split("{")[0]
        expect(fresh.get_by_text(notice).first).to_be_visible(timeout=APP_TIMEOUT_MS)
        expect(fresh.get_by_text("zoom").first).to_be_visible(timeout=APP_TIMEOUT_MS)
        expect(fresh.locator(HEATMAP).get_by_role("slider", name=it["attention.layer"])).to_have_value("0")
        assert fresh.locator('[data-testid="stException"]').count() == 0
    finally:
        context.close()
    assert external == []
