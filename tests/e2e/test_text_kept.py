"""The learner's own text survives a reload and a new tab, in the real browser.

A learner types a sentence, then reloads the lesson and opens another lesson's address in a new
tab of the same browser: the sentence is in the box both times (kept in the browser's local
storage, beside the progress), not the example sentence.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from lib.learner import progress_code as pc
from drivers.browser import APP_TIMEOUT_MS, goto, track, type_text

pytestmark = pytest.mark.e2e

MINE = "La professoressa di Bologna ha spiegato la lezione è finita."


def _box(page):
    return page.locator('[data-testid="stSidebar"] textarea').first


def test_the_learners_text_survives_a_reload_and_a_new_tab(page, app_url):
    from playwright.sync_api import expect

    it = i18n.ui("it")
    goto(page, f"{app_url}/?lang=it", it["lesson.numbers.title"])
    expect(_box(page)).to_have_value(it["text.example"])
    type_text(page, _box(page), MINE, submit="Control+Enter")
    page.wait_for_function("([k, v]) => window.localStorage.getItem(k) === v", arg=[pc.TEXT_ENTRY, MINE],
                           timeout=APP_TIMEOUT_MS)

    goto(page, f"{app_url}/?lang=it", it["lesson.numbers.title"])  # a reload: a new session
    expect(_box(page)).to_have_value(MINE, timeout=APP_TIMEOUT_MS)

    tab = page.context.new_page()
    track(tab)
    goto(tab, f"{app_url}/block?lang=it", it["lesson.block.title"])
    expect(_box(tab)).to_have_value(MINE, timeout=APP_TIMEOUT_MS)
    assert tab.locator('[data-testid="stException"]').count() == 0

    # Back to the example sentence: nothing is kept, and a reload shows the example again.
    type_text(tab, _box(tab), it["text.example"], submit="Control+Enter")
    tab.wait_for_function("k => window.localStorage.getItem(k) === null", arg=pc.TEXT_ENTRY, timeout=APP_TIMEOUT_MS)
