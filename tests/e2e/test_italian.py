"""The Italian course speaks Italian, in the real browser: no English hint of Streamlit's own.

Lesson 1 in Italian, with the progress box open (the file uploader) and the text box focused
(Streamlit's "Press Ctrl+Enter to apply"), then the tokenization lesson (whose player's button said "Play"):
none of Streamlit's English texts is visible, and Streamlit's "⋮" menu is not there.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, click, goto, press

pytestmark = pytest.mark.e2e

ENGLISH = ("Press Ctrl", "Press ⌘", "to apply", "Press Enter", "per file", "Drag and drop", "Browse files",
           "Upload", "Page not found", "Play", "Layer:")


def _visible_english(page) -> list[str]:
    shown = page.evaluate("() => document.body.innerText")
    return [w for w in ENGLISH if w in shown]


def test_the_italian_course_shows_no_english_hint(page, app_url):
    from playwright.sync_api import expect

    it = i18n.ui("it")
    goto(page, f"{app_url}/?lang=it", it["lesson.numbers.title"])
    sidebar = page.locator('[data-testid="stSidebar"]')
    keep = sidebar.locator('[data-testid="stExpander"]').filter(has_text=it["progress.keep"]).first
    click(page, keep.locator("summary"), rerun=False)
    box = sidebar.locator("textarea").first
    box.click()
    box.press("End")
    box.type(" Ciao")  # a changed text, still in the box: Streamlit would show "Press Ctrl+Enter to apply"
    expect(sidebar.locator('[data-testid="InputInstructions"]').first).to_be_attached(timeout=APP_TIMEOUT_MS)
    expect(keep.locator('[data-testid="stFileUploaderDropzone"]')).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(keep.get_by_text(it["progress.choose_file"])).to_have_count(0)  # drawn by CSS, not a text node
    button = keep.locator('[data-testid="stFileUploaderDropzone"] button').first
    assert it["progress.choose_file"] in button.evaluate("b => getComputedStyle(b, '::after').content")
    assert _visible_english(page) == []
    assert page.locator('[data-testid="stMainMenu"]').count() == 0
    press(page, box, "Control+Enter")  # the text applied before moving on

    click(page, sidebar.locator('[data-testid="stSidebarNav"] a', has_text=it["lesson.tokenization.title"]).first)
    expect(page.get_by_role("heading", name=it["lesson.tokenization.title"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert _visible_english(page) == []


def _english_labels() -> set[str]:
    """The course's own English labels that read differently in Italian: whole sentences or names
    (12 characters or more, nothing to fill in), so that none can be an Italian word by chance."""
    it, en = i18n.ui("it"), i18n.ui("en")
    # An English term the Italian texts themselves cite («flusso residuo (*residual stream*)») is not one.
    italian = "\n".join([*it.values(), *(x for lid in i18n.lesson_ids("it") for x in i18n.lesson("it", lid).values())])
    return {v for k, v in en.items()
            if len(v) >= 12 and "{" not in v and "%" not in v and v != it.get(k) and v not in italian}


@pytest.mark.parametrize("path", ["attention", "attenzion"])
def test_a_lesson_address_opened_directly_in_italian_shows_no_english(page, app_url, path):
    """A lesson's own address and a mistyped one, opened directly in Italian (a new session's first
    run is that page's) and scrolled to the end: no English. (The mistyped address's Italian notice
    itself is tests/e2e/test_addresses.py.)"""
    from drivers import axe

    english = _english_labels()
    goto(page, f"{app_url}/{path}?lang=it", timeout=APP_TIMEOUT_MS * 4)  # a first visit computes the lesson
    axe.scroll_to_end(page, APP_TIMEOUT_MS * 4)
    shown = page.evaluate("() => document.body.innerText")
    found = [f"/{path}: «{w}»" for w in (*ENGLISH, *english) if w in shown]
    assert not found, "\n".join(found)
