"""Lesson links opened on a freshly started server: a class following a shared link, all at once.

Every learner must get the whole app: app.py's sidebar (language switch, text box, model picker,
progress) and st.navigation's lesson titles in the link's language, never Streamlit's bare
pages-folder app (raw file names in the sidebar, no text box). Five browser contexts, one per link
(four lessons in English, the position lesson in Italian), start their navigation together, so the
server's very first request is a lesson's address and the first script runs overlap while it has
not yet seen any st.navigation call (it loads the model meanwhile: seconds in which every first run
is under way).
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from ui.shell.nav import LESSONS
from drivers.browser import REPO, SERVER_WARM_TIMEOUT_MS, learner_pages, serve, settle

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LINKS = [("attention", "en"), ("position", "it"), ("block", "en"), ("sampling", "en"), ("position", "en")]


def test_a_class_opens_lesson_links_on_a_fresh_server_and_each_gets_the_whole_app(browser):
    from playwright.sync_api import expect

    with learner_pages(browser, len(LINKS)) as pages:
        with serve(REPO / "app.py") as url:  # a fresh server: no st.navigation has run yet
            # Start every navigation before waiting on any (page.goto would wait for each in turn).
            for pg, (lesson, lang) in zip(pages, LINKS):
                pg.evaluate("u => { window.location.href = u; }", f"{url}/{lesson}?lang={lang}")
            for i, (pg, (lesson, lang)) in enumerate(zip(pages, LINKS)):
                labels = i18n.ui(lang)
                titles = [labels[f"lesson.{x.id}.title"] for x in LESSONS]
                settle(pg, SERVER_WARM_TIMEOUT_MS)
                sidebar = pg.locator('[data-testid="stSidebar"]')
                expect(pg.locator("h1").first).to_have_text(labels[f"lesson.{lesson}.title"],
                                                            timeout=SERVER_WARM_TIMEOUT_MS)
                # app.py's sidebar: the text box, the language switch, the model picker, progress.
                # (A session Streamlit first ran in its pages-folder mode is run again through
                # app.py, whose run waits for the model on a fresh server: the same wait as the title.)
                expect(sidebar.locator("textarea")).to_have_count(1, timeout=SERVER_WARM_TIMEOUT_MS)
                expect(sidebar.get_by_text(labels["sidebar.text"]).first).to_be_visible()
                expect(sidebar.get_by_text("Italiano").first).to_be_visible()
                expect(sidebar.get_by_text(labels["sidebar.progress"]).first).to_be_visible()
                # st.navigation's titles in the link's language, not the pages folder's file names.
                nav = pg.locator('[data-testid="stSidebarNav"]')
                links = [t.strip().splitlines()[-1] for t in nav.locator("a").all_inner_texts()]
                assert links[:len(titles)] == titles, f"learner {i} ({lesson}, {lang}) got the navigation {links}"
                assert pg.locator('[data-testid="stException"]').count() == 0
