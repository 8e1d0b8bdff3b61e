"""The embeddings lesson in the real browser: type two words, see the cosine heatmap follow; the
rows' dimensions, the neighbours' number and measure, the projection's switch and the depth are
answered in the browser (static/views/embeddings.js), with no frame to the server.

The `page` fixture fails the test if the app tried to reach any host other than this machine.
"""

from __future__ import annotations

import json
import re

import pytest

from lib.course import i18n
from drivers import axe
from drivers.browser import CHARTS, APP_TIMEOUT_MS, SERVER_WARM_TIMEOUT_MS, click, goto, runs_of, settle, type_text

pytestmark = pytest.mark.e2e

ROWS = '[data-testid="ittView"][data-view="embeddings.rows"]'
NEIGHBOURS = '[data-testid="ittView"][data-view="embeddings.neighbours"]'
PCA = '[data-testid="ittView"][data-view="embeddings.pca"]'
DEPTH = '[data-testid="ittView"][data-view="embeddings.depth"]'


def test_typing_two_words_updates_the_heatmap(page, app_url):
    """In Italian (the English page is covered by AppTest; one browser run keeps the suite fast)."""
    from playwright.sync_api import expect

    lang = "it"
    labels = i18n.ui(lang)
    page.set_viewport_size({"width": 1400, "height": 1000})
    # The first visit of the lesson on this server computes its figures: the warm-up's timeout.
    goto(page, f"{app_url}/embeddings?lang={lang}", labels["lesson.embeddings.title"], timeout=SERVER_WARM_TIMEOUT_MS)
    charts = page.locator(CHARTS)

    # The default list is drawn first: its last word labels the heatmap's axes.
    default_last = labels["embeddings.words.default"].split(",")[-1].strip()
    box = page.get_by_role("textbox", name=labels["embeddings.words.label"], exact=True)
    box.scroll_into_view_if_needed()
    before = charts.filter(has_text=default_last).first
    expect(before.locator("svg.main-svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)

    type_text(page, box, "apple, banana", submit="Enter")
    heatmap = charts.filter(has_text="banana").first  # with two words there is no PCA: only the heatmap
    expect(heatmap).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(heatmap).to_contain_text("apple", timeout=APP_TIMEOUT_MS)
    expect(heatmap).not_to_contain_text(default_last, timeout=APP_TIMEOUT_MS)
    # The page now asks for a third word before drawing the 2-D projection.
    expect(page.get_by_text(labels["embeddings.pca.need_three"])).to_be_visible(timeout=APP_TIMEOUT_MS)

    # The depth slider (a browser view) moves the marker of the same-word chart to 0, with no run.
    depth = page.locator(DEPTH)
    depth.scroll_into_view_if_needed()
    expect(depth).to_have_attribute("data-drawn", re.compile(r"^\d+$"), timeout=APP_TIMEOUT_MS)
    settle(page)
    sent = runs_of(page).sent
    slider = depth.get_by_role("slider", name=labels["embeddings.context.depth"])
    slider.focus()
    slider.press("Home")
    expect(depth.locator(".itt-metric-label").first).to_have_text(i18n.fill(labels["embeddings.context.cos_ab"], depth="0"))
    expect(depth.locator('[data-testid="embeddings.cos_ab"]')).to_have_text("1")  # the same table row
    expect(depth).to_have_attribute("data-drawn", "0")
    marker = depth.locator(".js-plotly-plot")
    page.wait_for_function("e => e._fullData && Array.from(e._fullData[1].x).join() === '0'",
                           arg=marker.element_handle(timeout=APP_TIMEOUT_MS), timeout=APP_TIMEOUT_MS)
    assert runs_of(page).sent == sent, "the depth slider sent something to the server"
    assert page.locator('[data-testid="stException"]').count() == 0


def test_the_views_answer_in_the_browser_and_a_link_carries_them(page, app_url):
    """Every view-only control with the keyboard (or a click for the switch), no frame to the
    server; the share link carries them; a reload finds them; axe finds nothing serious."""
    from playwright.sync_api import expect

    en = i18n.ui("en")
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/embeddings?lang=en", en["lesson.embeddings.title"], timeout=SERVER_WARM_TIMEOUT_MS)
    for view in (ROWS, NEIGHBOURS, PCA, DEPTH):
        page.locator(view).scroll_into_view_if_needed()
    rows, nb, pca, depth = (page.locator(v) for v in (ROWS, NEIGHBOURS, PCA, DEPTH))
    expect(rows).to_have_attribute("data-drawn", "32", timeout=APP_TIMEOUT_MS)
    expect(pca).to_have_attribute("data-drawn", "with", timeout=APP_TIMEOUT_MS)
    expect(depth).to_have_attribute("data-drawn", "30", timeout=APP_TIMEOUT_MS)
    settle(page)
    sent = runs_of(page).sent

    # The rows: four more dimensions; the heatmap's columns follow.
    rows.scroll_into_view_if_needed()
    dims = rows.get_by_role("slider", name=en["embeddings.rows.dims"])
    dims.focus()
    for _ in range(4):
        dims.press("ArrowRight")
    expect(rows).to_have_attribute("data-drawn", "36")
    page.wait_for_function("e => e._fullData && e._fullData[0].x.length === 36",
                           arg=rows.locator(".js-plotly-plot").element_handle(timeout=APP_TIMEOUT_MS), timeout=APP_TIMEOUT_MS)
    rows.locator("details.itt-table > summary").click()
    expect(rows.locator("details.itt-table thead th")).to_have_count(37)  # the token, then 36 dimensions

    # The neighbours: fewer of them, then by distance.
    nb.scroll_into_view_if_needed()
    table = nb.locator('[data-testid="embeddings.neighbours_table"] tbody tr')
    expect(table).to_have_count(10)
    first_by_cosine = [table.nth(i).locator("td").first.inner_text() for i in range(10)]
    k = nb.get_by_role("slider", name=en["embeddings.neighbours.k"])
    k.focus()
    k.press("ArrowLeft")
    k.press("ArrowLeft")
    expect(table).to_have_count(8)
    group = nb.get_by_role("group", name=en["embeddings.neighbours.metric"])
    euclid = group.get_by_role("radio", name=en["embeddings.metric.euclidean"])
    group.get_by_role("radio", name=en["embeddings.metric.cosine"]).focus()
    page.keyboard.press("ArrowRight")  # a radio group: the arrow moves the choice
    expect(euclid).to_be_checked()
    expect(nb).to_have_attribute("data-drawn", "8,euclidean")
    by_distance = [table.nth(i).locator("td").first.inner_text() for i in range(8)]
    assert by_distance[0] == first_by_cosine[0]  # the query's own row is first by both measures
    assert by_distance != first_by_cosine[:8]  # the longest rows fall back by distance

    # The projection without the neighbours: only the typed words' trace is left.
    pca.scroll_into_view_if_needed()
    switch = pca.get_by_role("checkbox", name=re.compile(re.escape(en["embeddings.pca.add"].split("{")[0])))
    switch.focus()
    page.keyboard.press("Space")
    expect(switch).not_to_be_checked()
    expect(pca).to_have_attribute("data-drawn", "alone")
    page.wait_for_function("e => e._fullData && e._fullData.length === 1",
                           arg=pca.locator(".js-plotly-plot").element_handle(timeout=APP_TIMEOUT_MS), timeout=APP_TIMEOUT_MS)

    # The depth: down to 5.
    depth.scroll_into_view_if_needed()
    slider = depth.get_by_role("slider", name=en["embeddings.context.depth"])
    slider.focus()
    slider.press("Home")
    for _ in range(5):
        slider.press("ArrowRight")
    expect(depth).to_have_attribute("data-drawn", "5")
    depth.locator("details.itt-table > summary").click()
    expect(depth.locator("details.itt-table tbody tr")).to_have_count(31)  # the input and 30 blocks
    assert runs_of(page).sent == sent, "a view-only move sent something to the server"

    # Nothing serious for axe-core on the page with the views as they are now.
    serious = [v for v in axe.violations(page) if v["impact"] in ("serious", "critical")]
    assert not serious, json.dumps(serious, indent=1)[:3000]

    # The share dialog's link carries what only the browser knows.
    click(page, page.get_by_role("button", name=en["share.button"]))
    url = page.locator('[data-testid="app.share.url"]')
    expect(url).to_have_value(re.compile(r"dims=36(&|$)"), timeout=APP_TIMEOUT_MS)
    for part in ("k=8", "metric=euclidean", "pca_add=false", "depth=5"):
        assert re.search(rf"[?&]{part}(&|$)", url.input_value()), (part, url.input_value())
    link = url.input_value()
    page.keyboard.press("Escape")
    expect(url).to_have_count(0)

    # A reload finds the choices where the learner left them.
    page.reload()
    expect(page.locator(DEPTH)).to_have_attribute("data-state", '{"depth":5}', timeout=APP_TIMEOUT_MS)
    expect(page.locator(NEIGHBOURS)).to_have_attribute("data-state", '{"k":8,"metric":"euclidean"}')

    # The link in a fresh browser: the same settings.
    other = page.context.browser.new_context(viewport={"width": 1400, "height": 1000}, service_workers="block")
    try:
        fresh = other.new_page()
        from drivers.browser import track

        track(fresh)
        goto(fresh, link, en["lesson.embeddings.title"], timeout=SERVER_WARM_TIMEOUT_MS)
        expect(fresh.locator(ROWS)).to_have_attribute("data-state", '{"dims":36}', timeout=APP_TIMEOUT_MS)
        expect(fresh.locator(NEIGHBOURS)).to_have_attribute("data-state", '{"k":8,"metric":"euclidean"}')
        expect(fresh.locator(PCA)).to_have_attribute("data-state", '{"pca_add":false}')
        expect(fresh.locator(DEPTH)).to_have_attribute("data-state", '{"depth":5}')
    finally:
        other.close()
