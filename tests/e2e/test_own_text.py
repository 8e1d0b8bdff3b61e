"""Several learners on one server send their own texts at the same moment; each sees only their own.

Four browser contexts share the session's server. Each fills the sidebar box with a different
text (of a different length, emoji and a long one included), then all four submit before any
waits, so their captures run at once on the shared model. Each learner must then find their own
text in the box and, in the tokenization lesson, one byte chip per byte of their own text.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, click, goto, learner_pages, runs_of, settle

pytestmark = pytest.mark.e2e

TEXTS = ["Il gatto dorme.", "The river bank 🙂 at dawn", "Numbers: 12345 67890 and more words here",
         "parola " * 120]


def test_each_learner_sees_only_their_own_text(browser, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    with learner_pages(browser, len(TEXTS)) as pages:
        for pg in pages:
            goto(pg, f"{app_url}/?lang=en", en["lesson.numbers.title"])
        boxes = [pg.locator('[data-testid="stSidebar"] textarea').first for pg in pages]
        marks = []
        for pg, box, text in zip(pages, boxes, TEXTS):
            box.fill(text)
            expect(box).to_have_value(text)
            marks.append(runs_of(pg).mark())
        for pg, box in zip(pages, boxes):  # all four submit before any waits
            box.press("Control+Enter")
        for pg, before in zip(pages, marks):
            runs = runs_of(pg)
            runs.wait(lambda runs=runs, before=before: runs.sent > before, APP_TIMEOUT_MS, "the text sent")
            settle(pg)
        for pg, box, text in zip(pages, boxes, TEXTS):
            click(pg, pg.locator('[data-testid="stSidebarNav"] a', has_text=en["lesson.tokenization.title"]).first)
            expect(box).to_have_value(text)
            replay = pg.locator('[data-testid="tokenization.real.chips"]')
            expect(replay.locator(".tok-chip")).to_have_count(len(text.encode()), timeout=APP_TIMEOUT_MS)
            assert pg.locator('[data-testid="stException"]').count() == 0
