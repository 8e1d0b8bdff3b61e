"""Progress survives a reload and a server restart, in the real browser.

A learner answers two questions of the first lesson (one right, one wrong), reloads the page, and
finds both verdicts, both answers and the sidebar's count; then the server stops and starts again
on the same address (the same origin, so the same local storage), and everything is still there.
The server is this test's own, so stopping it disturbs no other test.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from lib.course.quiz import load_bank
from drivers.browser import (APP_TIMEOUT_MS, REPO, SERVER_WARM_TIMEOUT_MS, _free_port, click, goto, serve,
                                type_text)

pytestmark = pytest.mark.e2e


def _form(page, prompt_start: str):
    return page.locator('[data-testid="stForm"]').filter(has_text=prompt_start).first


def _sees_both_answers(page, en, numeric, choice) -> None:
    from playwright.sync_api import expect

    num_form, choice_form = _form(page, "576"), _form(page, choice.prompt[:40])
    num_form.scroll_into_view_if_needed()
    expect(num_form.locator("input")).to_have_value(str(int(numeric.answer)), timeout=APP_TIMEOUT_MS)
    expect(page.get_by_text(en["quiz.right"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    choice_form.scroll_into_view_if_needed()
    expect(choice_form.get_by_role("radio", name=choice.options[1])).to_be_checked(timeout=APP_TIMEOUT_MS)
    wrong = en["quiz.wrong"].split("{")[0]
    expect(page.get_by_text(wrong).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    sidebar = page.locator('[data-testid="stSidebar"]')
    total = len(load_bank("en", "numbers"))
    count = en["quiz.count"].format(answered=2, total=total, correct=1)  # one right, one wrong
    expect(sidebar.get_by_text(count)).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0


def test_two_answers_survive_a_reload_and_a_server_restart(page):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    bank = {q.id: q for q in load_bank("en", "numbers")}
    numeric, choice = bank["live_d_head"], bank["kv_per_layer"]
    assert choice.answer != 1  # option 1 is a wrong answer: one right, one wrong
    port = _free_port()
    app = REPO / "app.py"

    with serve(app, port=port) as url:
        goto(page, f"{url}/?lang=en", en["lesson.numbers.title"], timeout=SERVER_WARM_TIMEOUT_MS)
        form = _form(page, "576")
        form.scroll_into_view_if_needed()
        type_text(page, form.locator("input"), str(int(numeric.answer)), submit=None)
        click(page, form.get_by_role("button", name=en["quiz.check"]))
        expect(page.get_by_text(en["quiz.right"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
        form = _form(page, choice.prompt[:40])
        form.scroll_into_view_if_needed()
        click(page, form.get_by_text(choice.options[1]), rerun=False)  # inside a form: sent by its button
        click(page, form.get_by_role("button", name=en["quiz.check"]))
        _sees_both_answers(page, en, numeric, choice)

        goto(page, f"{url}/?lang=en", en["lesson.numbers.title"])  # a reload: a new session
        _sees_both_answers(page, en, numeric, choice)

    with serve(app, port=port) as url:  # the same origin, a new server process
        goto(page, f"{url}/?lang=en", en["lesson.numbers.title"], timeout=SERVER_WARM_TIMEOUT_MS)
        _sees_both_answers(page, en, numeric, choice)
