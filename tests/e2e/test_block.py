"""The block lesson in the real browser: the logit lens's layer and position and the token whose
contributions are drawn and the token through the norm are answered in the browser (static/views/block.js), with no frame to the
server.

The learner opens the lesson from the sidebar, reaches the lens (computed on the server when
reached), finds it at the last layer (where it is the model itself), moves the layer slider down to
the embeddings with the keyboard and the reading follows; picks another position and another token;
the curve has its table; a reload finds the choices again; the share link carries them. The `page`
fixture fails the test on any outside request.
"""

from __future__ import annotations

import re

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, click, goto, loose, runs_of, settle, share_link, views_fit

pytestmark = pytest.mark.e2e

LENS = '[data-testid="ittView"][data-view="block.lens"]'
NORM = '[data-testid="ittView"][data-view="block.norm"]'
CONTRIB = '[data-testid="ittView"][data-view="block.contrib"]'



def reading(lang: str, layer: int) -> str:
    """The bold start of the lens's sentence for a layer, as the view writes it ("Layer 3")."""
    return i18n.fill(i18n.ui(lang)["block.lens.reading"], layer=str(layer)).split("**")[1]


def test_the_lens_and_the_token_answer_in_the_browser(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/?lang=en")
    click(page, page.locator('[data-testid="stSidebarNav"]').get_by_text(en["lesson.block.title"]).first)
    expect(page.get_by_text(en["block.lens.header"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(page.locator("h1").first).to_have_text(en["lesson.block.title"], timeout=APP_TIMEOUT_MS)

    # The lens is worked out on the server when the learner reaches it (ui.views.follow.when_reached):
    # a notice holds its place until then.
    box = page.locator(".st-key-block-lens_box")
    expect(box).to_contain_text(en["app.section_pending"], timeout=APP_TIMEOUT_MS)
    box.scroll_into_view_if_needed()
    lens = page.locator(LENS)
    said = lens.locator('[data-testid="block.lens.reading"] strong')
    expect(said).to_have_text(reading("en", 30), timeout=APP_TIMEOUT_MS)
    grid = page.locator(".st-key-block-lens_heatmap")
    grid.scroll_into_view_if_needed()
    expect(grid).to_contain_text(loose(en["block.lens.title"]), timeout=APP_TIMEOUT_MS)
    # The residual stream's section too is computed when reached.
    page.locator(".st-key-block-resid_box").scroll_into_view_if_needed()
    contrib = page.locator(CONTRIB)
    expect(contrib).to_have_attribute("data-drawn", re.compile(r"^\d+$"), timeout=APP_TIMEOUT_MS)
    settle(page)
    sent = runs_of(page).sent

    # The layer with the keyboard: down to the embeddings, then up two.
    lens.scroll_into_view_if_needed()
    slider = lens.get_by_role("slider", name=en["block.lens.layer"])
    slider.focus()
    slider.press("Home")
    expect(said).to_have_text(reading("en", 0))
    slider.press("ArrowRight")
    slider.press("ArrowRight")
    expect(said).to_have_text(reading("en", 2))
    # The curve marks the layer; its table has one row per layer (the embeddings and 30 blocks).
    expect(lens.get_by_role("figure")).to_have_count(1)
    lens.locator("details.itt-table > summary").click()
    expect(lens.locator("details.itt-table tbody tr")).to_have_count(31)
    # The first position: the reading is about its token.
    position = lens.get_by_role("combobox", name=en["block.lens.position"])
    position.select_option(index=0)
    expect(lens).to_have_attribute("data-drawn", "2,0")
    # The layer's top tokens at every position, in its table.
    expect(lens.locator(".itt-lens-table tbody tr").first).to_be_visible()
    # Another token's contributions.
    token = contrib.get_by_role("combobox", name=en["block.resid.token"])
    token.select_option(index=1)
    expect(contrib).to_have_attribute("data-drawn", "1")
    # Another token through the norm (at the layer the server sent): its numbers and its chart.
    norm = page.locator(NORM)
    norm.scroll_into_view_if_needed()
    before = norm.locator(".itt-metric-value").first.inner_text()
    norm.get_by_role("combobox", name=en["block.norm.token"]).select_option(index=0)
    expect(norm).to_have_attribute("data-drawn", "0")
    assert norm.locator(".itt-metric-value").first.inner_text() != before
    expect(norm.get_by_role("figure")).to_have_count(1)
    assert runs_of(page).sent == sent, "a view-only move sent something to the server"

    # The share dialog's link carries what only the browser knows.
    link = share_link(page, en["share.button"], r"lens_layer=2(&|$)")
    assert "lens_pos=0" in link and "resid_token=1" in link and "norm_token=0" in link

    # A reload finds the choices where the learner left them.
    page.reload()
    expect(page.locator(NORM)).to_have_attribute("data-state", '{"norm_token":0}', timeout=APP_TIMEOUT_MS)
    page.locator(".st-key-block-resid_box").scroll_into_view_if_needed(timeout=APP_TIMEOUT_MS)
    expect(page.locator(CONTRIB)).to_have_attribute("data-state", '{"resid_token":1}', timeout=APP_TIMEOUT_MS)
    page.locator(".st-key-block-lens_box").scroll_into_view_if_needed(timeout=APP_TIMEOUT_MS)
    expect(page.locator(LENS)).to_have_attribute("data-state", '{"lens_layer":2,"lens_pos":0}', timeout=APP_TIMEOUT_MS)
    # A phone's width: the views follow the window (charts redrawn narrower, tables scrolling in their box).
    page.set_viewport_size({"width": 390, "height": 900})
    views_fit(page)
    assert page.locator('[data-testid="stException"]').count() == 0
