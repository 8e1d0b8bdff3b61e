"""The teachers' page in the real browser: links at the address the browser used, and the class's
final quiz that its link opens (the same questions for two learners, no reroll)."""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, goto, settle, track

pytestmark = pytest.mark.e2e


def test_the_teachers_links_use_the_browsers_address_and_the_class_quiz_is_one(page, app_url):
    from playwright.sync_api import expect

    it = i18n.ui("it")
    goto(page, f"{app_url}/per-chi-insegna?lang=it", it["teachers.title"])
    page.wait_for_function("() => window.location.pathname === '/teachers'", timeout=APP_TIMEOUT_MS)
    codes = page.locator('[data-testid="stCode"]')
    expect(codes.first).to_contain_text(f"{app_url}/attention?lang=it", timeout=APP_TIMEOUT_MS)
    expect(page.get_by_text(it["teachers.local"].split("**")[0].strip()).first).to_be_visible()  # 127.0.0.1
    # The page draws its codes one after another: the quiz's link is the last one once it is drawn.
    expect(codes.last).to_contain_text(f"{app_url}/final?", timeout=APP_TIMEOUT_MS)
    quiz = codes.last.inner_text().strip()
    assert quiz == f"{app_url}/final?lang=it&seed=1", quiz

    prompts = []
    other = page.context.browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    try:
        for pg in (page, other.new_page()):  # two learners, two browsers
            track(pg)
            goto(pg, quiz, it["final.title"])
            expect(pg.get_by_text(i18n.fill(it["final.class"], seed="1", n="24"))).to_be_visible(timeout=APP_TIMEOUT_MS)
            expect(pg.get_by_role("button", name=it["final.new"])).to_have_count(0)
            forms = pg.locator('[data-testid="stMain"] [data-testid="stForm"]')
            expect(forms).to_have_count(24, timeout=APP_TIMEOUT_MS)
            settle(pg)
            # Each question's own text (its first paragraph), not its answer box, whose label can
            # still be drawing on a loaded machine (seen once: "La tua risposta" missing).
            prompts.append([f.locator('[data-testid="stMarkdownContainer"]').first.inner_text() for f in forms.all()])
    finally:
        other.close()
    assert len(prompts[0]) == 24 and prompts[0] == prompts[1]
