"""A class opens a shared lesson link on a freshly started server, all at the same moment.

Every learner must get the whole app: app.py's sidebar (language switch, text box, model picker,
progress) and st.navigation's lesson titles, never Streamlit's bare pages-folder app (raw file
names in the sidebar, no text box). Four browser contexts, one per link, start their navigation
together, so their first script runs overlap while the server has not yet seen any st.navigation
call (the server loads the model meanwhile: seconds in which every first run is under way).
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from ui.shell.nav import LESSONS
from drivers.browser import REPO, SERVER_WARM_TIMEOUT_MS, serve, settle, track

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LEARNERS = 4
LINKS = ["attention", "position", "block", "sampling"]


def test_many_learners_open_lesson_links_on_a_fresh_server(browser):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
                for _ in range(LEARNERS)]
    try:
        pages = [c.new_page() for c in contexts]
        for pg in pages:
            track(pg)
        with serve(REPO / "app.py") as url:
            # Start every navigation before waiting on any (page.goto would wait for each in turn).
            for i, pg in enumerate(pages):
                pg.evaluate("u => { window.location.href = u; }", f"{url}/{LINKS[i % len(LINKS)]}?lang=en")
            titles = [en[f"lesson.{x.id}.title"] for x in LESSONS]
            for i, pg in enumerate(pages):
                lesson = LINKS[i % len(LINKS)]
                settle(pg, SERVER_WARM_TIMEOUT_MS)
                sidebar = pg.locator('[data-testid="stSidebar"]')
                expect(pg.locator("h1").first).to_have_text(en[f"lesson.{lesson}.title"],
                                                            timeout=SERVER_WARM_TIMEOUT_MS)
                # app.py's sidebar: the text box, the language switch, the model picker, progress.
                # (A session Streamlit first ran in its pages-folder mode is run again through
                # app.py, whose run waits for the model on a fresh server: the same wait as the title.)
                expect(sidebar.locator("textarea")).to_have_count(1, timeout=SERVER_WARM_TIMEOUT_MS)
                expect(sidebar.get_by_text(en["sidebar.text"]).first).to_be_visible()
                expect(sidebar.get_by_text("Italiano").first).to_be_visible()
                expect(sidebar.get_by_text(en["sidebar.progress"]).first).to_be_visible()
                # st.navigation's titles, not the pages folder's file names.
                nav = pg.locator('[data-testid="stSidebarNav"]')
                links = [t.strip().splitlines()[-1] for t in nav.locator("a").all_inner_texts()]
                assert links[:len(titles)] == titles, f"learner {i} ({lesson}) got the navigation {links}"
                assert pg.locator('[data-testid="stException"]').count() == 0
    finally:
        for c in contexts:
            c.close()
