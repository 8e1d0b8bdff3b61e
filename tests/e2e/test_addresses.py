"""Lesson addresses a teacher may write on the board: lesson 1 by name, and Italian names.

`/numbers` (lesson 1, whose page is the app's default at `/`) and the Italian `/attenzione`,
`/blocco`... open their lesson, in the language the link asked for, with no "Page not found" modal;
the address bar then shows the lesson's own address.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, goto

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("path, lesson, shown", [
    ("numbers", "numbers", ""), ("numeri", "numbers", ""), ("attenzione", "attention", "attention"),
    ("blocco", "block", "block"), ("campionamento", "sampling", "sampling"),
])
def test_an_other_address_opens_its_lesson(page, app_url, path, lesson, shown):
    from playwright.sync_api import expect

    it = i18n.ui("it")
    goto(page, f"{app_url}/{path}?lang=it", it[f"lesson.{lesson}.title"])
    expect(page.get_by_role("heading", name=it[f"lesson.{lesson}.title"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    page.wait_for_function("p => window.location.pathname === p", arg=f"/{shown}", timeout=APP_TIMEOUT_MS)
    assert "lang=it" in page.url
    assert page.get_by_text("Page not found").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.parametrize("lang", ["it", "en"])
@pytest.mark.parametrize("path", ["foo", "attenzion"])
def test_an_address_that_names_no_page_opens_lesson_one_with_a_notice_in_the_language(page, app_url, path, lang):
    """A one-part address. (One of two parts, /foo/bar, never connects: Streamlit's page takes
    /foo/ for the app's base and asks /foo/_stcore/ for its websocket; nginx can redirect those.)"""
    from playwright.sync_api import expect

    labels = i18n.ui(lang)
    goto(page, f"{app_url}/{path}?lang={lang}", labels["lesson.numbers.title"])
    expect(page.get_by_text(labels["nav.not_found"])).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert page.get_by_text("Page not found").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0


def test_the_notice_stays_when_the_browser_brings_back_what_it_kept(page, app_url):
    """A learner with their own text kept in the browser mistypes an address: the text coming back
    reruns the whole page once, and the notice is still there after it (it stays on the page it
    was raised for); on another lesson it is gone."""
    from playwright.sync_api import expect

    from lib.learner import progress_code as pc
    from drivers.browser import click, type_text

    it = i18n.ui("it")
    mine = "La professoressa di Bologna ha spiegato la lezione."
    goto(page, f"{app_url}/?lang=it", it["lesson.numbers.title"])
    box = page.locator('[data-testid="stSidebar"] textarea').first
    type_text(page, box, mine, submit="Control+Enter")
    page.wait_for_function("([k, v]) => window.localStorage.getItem(k) === v", arg=[pc.TEXT_ENTRY, mine],
                           timeout=APP_TIMEOUT_MS)
    goto(page, f"{app_url}/attenzion?lang=it", it["lesson.numbers.title"])  # waits for the browser's answer
    expect(box).to_have_value(mine, timeout=APP_TIMEOUT_MS)  # it came back: the page ran again
    expect(page.get_by_text(it["nav.not_found"])).to_be_visible(timeout=APP_TIMEOUT_MS)
    click(page, page.locator('[data-testid="stSidebarNav"] a', has_text=it["lesson.position.title"]).first)
    expect(page.get_by_role("heading", name=it["lesson.position.title"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert page.get_by_text(it["nav.not_found"]).count() == 0
