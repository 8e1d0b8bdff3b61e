"""A learner in a class, in Chromium: what only a browser shows.

- Answers given before joining, in a session the learner reloaded since: the class gets each first
  answer as it was given (its number, its verdict), never a later answer nor the words typed.
- The proposed pseudonym shows in the join panel's box from the box's first drawing (as its
  placeholder while Streamlit's box has not put its value in yet), in a fresh browser and in one
  whose copy of the progress is restored (which reruns the page); never an empty box.
- A lesson the teacher has not opened yet, opened by a joined learner in a new tab, is shut from
  the page's first drawing (the membership comes back from the browser only after that drawing).
- The teacher's lead reaches a learner wherever they are on the page: at the bottom of the lesson
  (its quiz) on a laptop, and on a phone, the banner is in the window, announced (role="status").
"""

from __future__ import annotations

import json

import pytest

from drivers.browser import APP_TIMEOUT_MS, SERVER_WARM_TIMEOUT_MS, click, goto, settle, type_text
from lib.classroom.classroom import ClassStore
from lib.course import i18n

pytestmark = pytest.mark.e2e

BANNER_MS = 30_000  # the idle check looks every 10 s at a pacing cached for 3 s; a busy machine


def _answer(pg, qid: str, text: str) -> None:
    en = i18n.ui("en")
    box = pg.locator(f'[class*="st-key-itt_decimal-quiz-numbers-{qid}"] input')
    box.scroll_into_view_if_needed()
    form = pg.locator('[data-testid="stForm"]').filter(has=box)
    type_text(pg, box, text, submit=None)
    click(pg, form.get_by_role("button", name=en["quiz.check"]))


def test_answers_before_joining_reach_the_class_as_first_given_after_a_reload(browser, app_url, page):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    store = ClassStore.from_env()
    created = store.create_class("Before")
    try:
        goto(page, f"{app_url}/?lang=en", en["lesson.numbers.title"], timeout=SERVER_WARM_TIMEOUT_MS)
        _answer(page, "d_model_from_heads", "4000 Mario Rossi via Roma")  # wrong, and words
        expect(page.get_by_text("Not quite.").first).to_be_visible(timeout=APP_TIMEOUT_MS)
        _answer(page, "d_model_from_heads", "4096")  # right now, but not the first
        _answer(page, "d_head_70b", "128 numbers")  # right, first
        # A new session: the progress and the first answers come back from the browser's storage.
        goto(page, f"{app_url}/?lang=en&class={created.code}", en["lesson.numbers.title"], timeout=APP_TIMEOUT_MS)
        box = page.get_by_role("textbox", name=en["class.join.pseudonym"])
        type_text(page, box, "Early", submit=None)
        panel = page.locator('[data-testid="stForm"]').filter(has=box)
        click(page, panel.get_by_role("button", name=en["class.join.button"], exact=True))
        expect(page.locator('[data-testid="stSidebar"]').get_by_text("Early", exact=True)).to_be_visible(
            timeout=APP_TIMEOUT_MS)
        settle(page)
        got = {(s.question_id, a.answer, a.correct, a.count)
               for s in store.dashboard(created.code, created.secret).questions for a in s.answers}
        assert got == {("d_model_from_heads", "4000", False, 1), ("d_head_70b", "128", True, 1)}
        exported = store.export_csv(created.code, created.secret)
        assert "Mario" not in exported and "128 numbers" not in exported
    finally:
        store.delete_class(created.code, created.secret)


def test_the_teachers_lead_is_in_the_window_wherever_the_learner_is(browser, app_url, request):
    """Two learners of one class, on a laptop (1280 x 900) and on a phone (390 x 844), each down at
    the lesson's quiz: the teacher's lead reaches both, in the window."""
    from contextlib import ExitStack

    from playwright.sync_api import expect

    from drivers.browser import offline_page

    en = i18n.ui("en")
    store = ClassStore.from_env()
    created = store.create_class("Lead")
    try:
        with ExitStack() as stack:
            pages = []
            for width, height in ((1280, 900), (390, 844)):
                pg = stack.enter_context(offline_page(browser, request, viewport={"width": width, "height": height}))
                goto(pg, f"{app_url}/?lang=en&class={created.code}", en["lesson.numbers.title"],
                     timeout=SERVER_WARM_TIMEOUT_MS)
                box = pg.get_by_role("textbox", name=en["class.join.pseudonym"])
                type_text(pg, box, f"Led {width}", submit=None)
                panel = pg.locator('[data-testid="stForm"]').filter(has=box)
                click(pg, panel.get_by_role("button", name=en["class.join.button"], exact=True))
                settle(pg)
                # Down at the lesson's quiz, the last question.
                pg.locator('[data-testid="stForm"]').last.scroll_into_view_if_needed()
                pages.append(pg)
            store.set_lead(created.code, created.secret, "attention")
            text = i18n.fill(en["class.banner.lead"], title=en["lesson.attention.title"])
            go = i18n.fill(en["class.banner.go"], title=en["lesson.attention.title"])
            for pg in pages:
                banner = pg.get_by_role("status").filter(has_text=text)
                expect(banner).to_be_visible(timeout=BANNER_MS)
                expect(banner).to_be_in_viewport()
                expect(pg.get_by_role("button", name=go)).to_be_in_viewport()
    finally:
        store.delete_class(created.code, created.secret)


def test_a_long_pseudonym_gets_a_message_and_an_idle_learner_is_told_the_class_is_over(browser, app_url, page):
    """A pasted pseudonym over 32 characters is refused with a message (the browser's box does not
    cut it in silence); then, joined and idle, the learner is told within seconds that the teacher
    deleted the class, and the message stays."""
    from playwright.sync_api import expect

    en = i18n.ui("en")
    store = ClassStore.from_env()
    created = store.create_class("Short")
    try:
        goto(page, f"{app_url}/?lang=en&class={created.code}", en["lesson.numbers.title"],
             timeout=SERVER_WARM_TIMEOUT_MS)
        box = page.get_by_role("textbox", name=en["class.join.pseudonym"])
        panel = page.locator('[data-testid="stForm"]').filter(has=box)
        type_text(page, box, "A pseudonym that runs well past the limit", submit=None)
        click(page, panel.get_by_role("button", name=en["class.join.button"], exact=True))
        expect(page.get_by_text(i18n.fill(en["class.err.long"], n="32"))).to_be_visible(timeout=APP_TIMEOUT_MS)
        assert store.dashboard(created.code, created.secret).learners == ()
        type_text(page, box, "Idle one", submit=None)
        click(page, panel.get_by_role("button", name=en["class.join.button"], exact=True))
        sidebar = page.locator('[data-testid="stSidebar"]')
        expect(sidebar.get_by_text("Idle one", exact=True)).to_be_visible(timeout=APP_TIMEOUT_MS)
        settle(page)
        store.delete_class(created.code, created.secret)
        expect(sidebar.get_by_text(en["class.gone.deleted"])).to_be_visible(timeout=BANNER_MS)
        expect(sidebar.get_by_role("button", name=en["class.side.leave"])).to_have_count(0)
        page.wait_for_timeout(3_000)  # later runs of the page leave the message in place
        expect(sidebar.get_by_text(en["class.gone.deleted"])).to_be_visible()
    finally:
        if store.class_info(created.code) is not None:
            store.delete_class(created.code, created.secret)


# Every animation frame, what the join box shows (its value, or its placeholder when it has none)
# whenever it differs from the last one seen: what the learner could see, frame by frame, from the
# box's first drawing on.
_BOX_SHOWS = """(label) => {
  window.__ittBoxShows = [];
  const look = () => {
    const box = document.querySelector(`input[aria-label="${label}"]`);
    const seen = window.__ittBoxShows;
    const shows = box && (box.value || box.placeholder);
    if (box && (seen.length === 0 || seen[seen.length - 1] !== shows)) seen.push(shows);
    requestAnimationFrame(look);
  };
  look();
}"""


def test_the_proposed_pseudonym_is_in_the_box_from_its_first_drawing(browser, app_url, page):
    """The box was drawn empty first and showed the proposal only once Streamlit's box had put its
    value in (up to a second or two on a busy page)."""
    from playwright.sync_api import expect

    from drivers.browser import offline_page, track

    en = i18n.ui("en")
    label = en["class.join.pseudonym"]
    store = ClassStore.from_env()
    created = store.create_class("Proposed")

    def shows(pg) -> list[str]:
        """Open the join link in `pg`; what its box showed, frame by frame, until the page settled."""
        pg.add_init_script(f"({_BOX_SHOWS})({json.dumps(label)})")
        goto(pg, f"{app_url}/?lang=en&class={created.code}", en["lesson.numbers.title"], timeout=APP_TIMEOUT_MS)
        box = pg.get_by_role("textbox", name=label)
        expect(box).to_be_visible(timeout=APP_TIMEOUT_MS)
        settle(pg)
        seen = pg.evaluate("window.__ittBoxShows")
        assert seen[-1] == box.input_value()
        return seen

    try:
        with offline_page(browser, None) as fresh:  # a browser that never saw the course
            seen = shows(fresh)
            assert seen and "" not in seen, seen
            assert len(set(seen)) == 1, seen
        # A browser that keeps progress: the new tab's restore reruns the page under the open panel.
        goto(page, f"{app_url}/?lang=en", en["lesson.numbers.title"], timeout=APP_TIMEOUT_MS)
        _answer(page, "d_head_70b", "128")
        tab = page.context.new_page()
        track(tab)
        seen = shows(tab)
        assert seen and "" not in seen, seen
        assert len(set(seen)) == 1, seen  # one proposal, kept through the restore's rerun
    finally:
        store.delete_class(created.code, created.secret)


# Every animation frame, the main area's titles (a lesson's st.title) not seen before.
_TITLES = """() => {
  window.__ittTitles = [];
  const look = () => {
    for (const h of document.querySelectorAll('[data-testid="stMain"] h1')) {
      const text = h.textContent.trim();
      if (text && !window.__ittTitles.includes(text)) window.__ittTitles.push(text);
    }
    requestAnimationFrame(look);
  };
  look();
}"""


def test_a_shut_lesson_opened_in_a_new_tab_is_shut_from_its_first_drawing(browser, app_url, page):
    """The new tab drew the whole lesson, and shut it only once the browser's copy of the membership
    had come back and rerun the page."""
    from playwright.sync_api import expect

    from drivers.browser import track

    en = i18n.ui("en")
    store = ClassStore.from_env()
    created = store.create_class("Shut")
    try:
        store.set_open_upto(created.code, created.secret, "numbers")
        goto(page, f"{app_url}/?lang=en&class={created.code}", en["lesson.numbers.title"],
             timeout=SERVER_WARM_TIMEOUT_MS)
        box = page.get_by_role("textbox", name=en["class.join.pseudonym"])
        type_text(page, box, "Tabs", submit=None)
        panel = page.locator('[data-testid="stForm"]').filter(has=box)
        click(page, panel.get_by_role("button", name=en["class.join.button"], exact=True))
        expect(page.locator('[data-testid="stSidebar"]').get_by_text("Tabs", exact=True)).to_be_visible(
            timeout=APP_TIMEOUT_MS)
        settle(page)

        tab = page.context.new_page()
        track(tab)
        tab.add_init_script(f"({_TITLES})()")
        goto(tab, f"{app_url}/tokenization?lang=en", timeout=APP_TIMEOUT_MS)
        shut = i18n.fill(en["class.locked"], title=en["lesson.numbers.title"])
        expect(tab.get_by_text(shut)).to_be_visible(timeout=APP_TIMEOUT_MS)
        expect(tab.locator('[data-testid="stSidebar"]').get_by_text("Tabs", exact=True)).to_be_visible(
            timeout=APP_TIMEOUT_MS)  # the membership is back, and the lesson still shut
        settle(tab)
        assert en["lesson.tokenization.title"] not in tab.evaluate("window.__ittTitles")
        expect(tab.get_by_text(shut)).to_be_visible()
        # The same lesson once the teacher opens it: drawn (the check above could see a title). The
        # lesson's title is also its sidebar link, so the wait is for the heading in the main area: a
        # learner's view of the pacing may be a few seconds old (ui/classroom/access.py, PACING_SECONDS), and
        # the page opens by itself when the banner next looks.
        store.set_open_upto(created.code, created.secret, None)
        goto(tab, f"{app_url}/tokenization?lang=en", timeout=APP_TIMEOUT_MS)
        heading = tab.locator('[data-testid="stMain"] h1').filter(has_text=en["lesson.tokenization.title"])
        expect(heading.first).to_be_visible(timeout=APP_TIMEOUT_MS)
        tab.wait_for_function(f"window.__ittTitles.includes({json.dumps(en['lesson.tokenization.title'])})",
                              timeout=APP_TIMEOUT_MS)
    finally:
        store.delete_class(created.code, created.secret)
