"""A computer shared by a class, in the real browser: progress kept per nickname, and "start afresh".

On one browser profile, an unnamed learner answers a question; "anna" gives her nickname, starts
from nothing and answers it differently; a reload keeps her (nickname, answer); "start afresh"
leaves her nickname and empties the unnamed progress, which a reload confirms; typing "anna"
again brings her answer back. Local storage holds one entry per learner.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from lib.learner import progress_code as pc
from drivers.browser import APP_TIMEOUT_MS, click, goto, type_text

pytestmark = pytest.mark.e2e


def _quiz_box(page):
    form = page.locator('[data-testid="stForm"]').filter(has_text="576").first
    form.scroll_into_view_if_needed()
    return form


def _answer(page, en, value: str) -> None:
    form = _quiz_box(page)
    type_text(page, form.locator("input"), value, submit=None)
    click(page, form.get_by_role("button", name=en["quiz.check"]))


def _learner_box(page, en):
    sidebar = page.locator('[data-testid="stSidebar"]')
    box = sidebar.locator('[data-testid="stExpander"]').filter(has_text=en["learner.title"]).first
    if not box.get_by_label(en["learner.input"]).is_visible():
        click(page, box.locator("summary"), rerun=False)
    return box


def _use_nickname(page, en, name: str) -> None:
    box = _learner_box(page, en)
    type_text(page, box.get_by_label(en["learner.input"]), name, submit=None)
    click(page, box.get_by_role("button", name=en["learner.use"]))
    page.wait_for_function("() => document.documentElement.dataset.ittProgress === 'ready'")


def test_a_nickname_keeps_a_learners_progress_apart_and_start_afresh_empties_the_rest(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    url = f"{app_url}/?lang=en"
    sidebar = page.locator('[data-testid="stSidebar"]')
    named = en["sidebar.learner"].format(name="anna")

    goto(page, url, en["lesson.numbers.title"])
    _answer(page, en, "64")
    expect(_quiz_box(page).locator("input")).to_have_value("64")

    _use_nickname(page, en, "Anna")  # kept as "anna"
    expect(sidebar.get_by_text(named)).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(_quiz_box(page).locator("input")).to_have_value("", timeout=APP_TIMEOUT_MS)
    _answer(page, en, "7")
    page.wait_for_function("k => (window.localStorage.getItem(k) || '').length > 0",
                           arg=pc.entries("anna")["progress"], timeout=APP_TIMEOUT_MS)

    goto(page, url, en["lesson.numbers.title"])  # a reload: still anna, with her answer
    expect(sidebar.get_by_text(named)).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(_quiz_box(page).locator("input")).to_have_value("7", timeout=APP_TIMEOUT_MS)

    box = _learner_box(page, en)
    click(page, box.get_by_role("button", name=en["learner.afresh"]))
    click(page, box.get_by_role("button", name=en["learner.afresh_confirm"]))
    expect(sidebar.get_by_text(named)).to_have_count(0, timeout=APP_TIMEOUT_MS)
    expect(_quiz_box(page).locator("input")).to_have_value("", timeout=APP_TIMEOUT_MS)

    goto(page, url, en["lesson.numbers.title"])  # the unnamed progress ("64") is gone for good
    expect(_quiz_box(page).locator("input")).to_have_value("", timeout=APP_TIMEOUT_MS)
    assert page.evaluate("k => window.localStorage.getItem(k)", pc.LEARNER_ENTRY) is None

    _use_nickname(page, en, "anna")
    expect(_quiz_box(page).locator("input")).to_have_value("7", timeout=APP_TIMEOUT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0
