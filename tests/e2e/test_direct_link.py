"""A lesson's own URL, opened as the very first request after the server starts, gets the app."""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, REPO, SERVER_WARM_TIMEOUT_MS, goto, serve

pytestmark = pytest.mark.e2e


def test_first_request_to_a_lesson_url_runs_the_whole_app(page):
    from playwright.sync_api import expect

    labels = i18n.ui("it")
    with serve(REPO / "app.py") as url:  # a fresh server: no st.navigation has run yet
        # v1 mode would run pages/04_position.py alone; the first run loads the model
        goto(page, f"{url}/position?lang=it", labels["lesson.position.title"], timeout=SERVER_WARM_TIMEOUT_MS)
        sidebar = page.locator('[data-testid="stSidebar"]')
        expect(sidebar.get_by_text(labels["sidebar.text"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
        expect(page.locator("h1").first).to_have_text(labels["lesson.position.title"], timeout=APP_TIMEOUT_MS)
        assert page.locator('[data-testid="stException"]').count() == 0
