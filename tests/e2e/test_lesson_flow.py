"""A learner's path through the first lesson in the real browser, with no internet.

Open the app in English, see the plotly charts and the bertviz view drawn from the vendored
JavaScript, switch to Italian, answer a quiz question, and see the progress move. The `page`
fixture fails the test if the app tried to reach any host other than this machine.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from lib.course.quiz import load_bank
from drivers.browser import CHARTS, APP_TIMEOUT_MS, click, goto, save_screenshot, slide, type_text

pytestmark = pytest.mark.e2e


def test_learner_path_through_lesson_one(page, app_url, tmp_path):
    from playwright.sync_api import expect

    en, it = i18n.ui("en"), i18n.ui("it")
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/?lang=en", en["lesson.numbers.title"])
    expect(page.locator("h1").first).to_have_text(en["lesson.numbers.title"], timeout=APP_TIMEOUT_MS)
    # Plotly charts draw real SVG.
    charts = page.locator(CHARTS)
    expect(charts.first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(charts.nth(1)).to_be_attached(timeout=APP_TIMEOUT_MS)  # plotly mounts each chart lazily
    charts.nth(1).scroll_into_view_if_needed()
    expect(charts.nth(1).locator("svg.main-svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    page.locator("h2").filter(has_text=en["numbers.live.header"]).first.evaluate("e => e.scrollIntoView()")
    save_screenshot(page, "screenshot.png", tmp_path)  # the README's picture: the live model's numbers and where its parameters are

    # bertviz draws its token labels inside the iframe: only possible if require.js, d3 and
    # jQuery loaded from the app itself (anything else would have been blocked).
    frame_el = page.locator("iframe").first
    frame_el.scroll_into_view_if_needed()
    frame = page.frame_locator("iframe").first
    expect(frame.locator("#vis svg text").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert frame.locator("#vis svg text").count() >= 2

    # Switch the language: the page and the URL follow.
    click(page, page.locator('[data-testid="stSidebar"]').get_by_text("Italiano").first)
    expect(page.get_by_text(it["lesson.numbers.title"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(page.locator("h1").first).to_have_text(it["lesson.numbers.title"], timeout=APP_TIMEOUT_MS)
    assert "lang=it" in page.url

    # Answer a numeric question of the Italian quiz, and see the verdict and the progress.
    q = next(x for x in load_bank("it", "numbers") if x.id == "live_d_head")
    form = page.locator('[data-testid="stForm"]').filter(has_text="576")
    form = form.filter(has=page.locator("input")).first
    form.scroll_into_view_if_needed()
    type_text(page, form.locator("input"), str(int(q.answer)), submit=None)
    click(page, form.get_by_role("button", name=it["quiz.check"]))
    expect(page.get_by_text(it["quiz.right"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    n = len(load_bank("it", "numbers"))
    count = i18n.fill(it["quiz.count"], answered="1", total=str(n), correct="1")
    expect(page.locator('[data-testid="stSidebar"]').get_by_text(count).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0


def test_layer_slider_redraws_bertviz(page, app_url):
    from playwright.sync_api import expect

    goto(page, f"{app_url}/?lang=en", i18n.ui("en")["lesson.numbers.title"])
    frame = page.frame_locator("iframe").first
    expect(frame.locator("#layer")).to_have_value("15", timeout=APP_TIMEOUT_MS)
    slide(page, page.get_by_role("slider").first, "Home", "0")  # to layer 0: bertviz's own menu follows
    frame = page.frame_locator("iframe").first
    expect(frame.locator("#layer")).to_have_value("0", timeout=APP_TIMEOUT_MS)
    expect(frame.locator("#vis svg text").first).to_be_visible(timeout=APP_TIMEOUT_MS)
