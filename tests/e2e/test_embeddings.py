"""The embeddings lesson in the real browser: type two words, see the cosine heatmap follow.

The `page` fixture fails the test if the app tried to reach any host other than this machine.
"""

from __future__ import annotations

import pytest

from lib import i18n
from drivers.browser import CHARTS, APP_TIMEOUT_MS, goto, slide, type_text

pytestmark = pytest.mark.e2e


def test_typing_two_words_updates_the_heatmap(page, app_url):
    """In Italian (the English page is covered by AppTest; one browser run keeps the suite fast)."""
    from playwright.sync_api import expect

    lang = "it"
    labels = i18n.ui(lang)
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/embeddings?lang={lang}", labels["lesson.embeddings.title"])
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

    # The depth slider (its section is a fragment) moves the marker of the same-word chart to 0.
    depth = page.locator(".st-key-embeddings-depth").get_by_role("slider")
    slide(page, depth, "Home", "0")
    expect(page.get_by_text(i18n.fill(labels["embeddings.context.cos_ab"], depth="0")).first).to_be_visible(
        timeout=APP_TIMEOUT_MS)
    marker = page.locator(".st-key-embeddings-depth_chart .js-plotly-plot")
    page.wait_for_function("e => e._fullData && Array.from(e._fullData[1].x).join() === '0'",
                           arg=marker.element_handle(timeout=APP_TIMEOUT_MS), timeout=APP_TIMEOUT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0
