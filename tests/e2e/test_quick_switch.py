"""A learner who opens the app and goes to a lesson at once keeps their text.

The session's one progress rerun (ui/persist.py: the browser answers with what it kept) used to
arrive, when it followed a lesson switch at once, with the sidebar's text box empty: the text was
lost and every section needing it vanished (found with scripts/bench_ui.py --no-warm). This test
clicks the lesson link as soon as the sidebar shows it, without waiting for that rerun.
"""

from __future__ import annotations

import pytest

from lib import i18n
from tests.e2e.conftest import APP_TIMEOUT_MS, runs_of, settle

pytestmark = pytest.mark.e2e


def test_a_lesson_opened_at_once_keeps_the_text(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    runs_of(page).reset()
    page.goto(f"{app_url}/?lang=en")
    link = page.locator('[data-testid="stSidebarNav"] a', has_text=en["lesson.position.title"]).first
    expect(link).to_be_visible(timeout=APP_TIMEOUT_MS)
    link.click()  # no wait for the progress mark: the race this test is about
    expect(page.locator("h1", has_text=en["lesson.position.title"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    page.wait_for_function("document.documentElement.dataset.ittProgress === 'ready'", timeout=APP_TIMEOUT_MS)
    settle(page)
    box = page.locator('[data-testid="stSidebar"] textarea').first
    expect(box).to_have_value(en["text.example"], timeout=APP_TIMEOUT_MS)
    # The section that reads the text is there, with its sliders.
    expect(page.locator(".st-key-position-layer").first).to_be_attached(timeout=APP_TIMEOUT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0
