"""A learner who opens the app and goes to a lesson at once keeps their text.

The session's one progress rerun (ui/learner/persist.py: the browser answers with what it kept) used to
arrive, when it followed a lesson switch at once, with the sidebar's text box empty: the browser
had drawn the box from a run it did not finish, with the box's default, which was empty; the text
was lost and every section needing it vanished (docs/architecture.md, "The text box's default").
This test clicks the lesson link as soon as the sidebar shows it, without waiting for that rerun;
the race shows under load (3 of 12 tries on three test workers), so one pass proves little, and
tests/test_page_share.py checks the cause: the box's default is the learner's text.

The same click, made before the progress store's script was loaded, once left the new lesson's main
area empty for good: the store's ask left after the switch, under the first page's address
(docs/architecture.md, "A lesson switched to at once"); tests/js/progress_store.test.js checks that
such an ask waits.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, runs_of, settle

pytestmark = pytest.mark.e2e


def test_a_lesson_opened_at_once_keeps_the_text(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    runs = runs_of(page)
    runs.reset()
    page.goto(f"{app_url}/?lang=en")
    link = page.locator('[data-testid="stSidebarNav"] a', has_text=en["lesson.position.title"]).first
    expect(link).to_be_visible(timeout=APP_TIMEOUT_MS)
    link.click()  # no wait for the progress mark: the race this test is about
    try:
        expect(page.locator("h1", has_text=en["lesson.position.title"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    except AssertionError as e:  # the runs the browser asked for and the server made say which race it was
        raise AssertionError(f"{e}\nat {page.url}; runs:\n  " + "\n  ".join(runs.history)) from None
    page.wait_for_function("document.documentElement.dataset.ittProgress === 'ready'", timeout=APP_TIMEOUT_MS)
    settle(page)
    box = page.locator('[data-testid="stSidebar"] textarea').first
    expect(box).to_have_value(en["text.example"], timeout=APP_TIMEOUT_MS)
    # The section that reads the text is there, with its sliders.
    expect(page.locator(".st-key-position-layer").first).to_be_attached(timeout=APP_TIMEOUT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0


def test_a_section_of_a_page_left_behind_never_asks_for_its_rerun(page, app_url):
    """A section computed when reached (ui.views.follow) asks the server for its rerun when it comes into
    sight. A click on another lesson changes the address at once and the old page stays drawn until
    the new page's run replaces it; the old page's sections must not ask then: Streamlit drops a
    rerun of a section the new page's run removed, and the browser (and a test waiting on it) would
    wait for a run that never comes. Seen as a test that never settled after a sidebar click."""
    from playwright.sync_api import expect

    from drivers.browser import goto

    pending = i18n.ui("it")["app.section_pending"]
    goto(page, f"{app_url}/sampling?lang=it")
    box = page.locator(".st-key-sampling-loss_box")
    expect(box).to_contain_text(pending, timeout=APP_TIMEOUT_MS)  # far below: not computed yet
    runs = runs_of(page)
    before = runs.mark()
    # The address of another page, as a sidebar click sets it, with this page still drawn.
    page.evaluate("() => history.pushState({}, '', location.pathname.replace(/sampling$/, 'kvcache'))")
    box.evaluate("b => b.scrollIntoView({block: 'center'})")
    # The follower looks 250 ms after the section comes into sight; wait two of its turns.
    page.wait_for_timeout(1_000)
    assert runs.sent == before, "\n".join(runs.history)
    expect(box).to_contain_text(pending)
    # Back on its own page (the address), the same section asks and is computed: the follower works.
    page.evaluate("() => history.pushState({}, '', location.pathname.replace(/kvcache$/, 'sampling'))")
    # The learner scrolls away (the section's follower sees it leave) and back: it comes into sight again.
    page.locator("h1").first.evaluate("h => h.scrollIntoView()")
    page.wait_for_function("f => f.__ittVisible === false",
                           arg=box.locator("div.itt-follow").first.element_handle(timeout=APP_TIMEOUT_MS),
                           timeout=APP_TIMEOUT_MS)
    box.evaluate("b => b.scrollIntoView({block: 'center'})")
    runs.wait(lambda: runs.sent > before, APP_TIMEOUT_MS, "the section asking for its rerun")
    settle(page)
    expect(box).not_to_contain_text(pending, timeout=APP_TIMEOUT_MS)


def test_an_ask_that_names_the_page_left_brings_the_lesson_back(app_url):
    """The quick switch's last race, made exact over Streamlit's own protocol (no browser timing).

    Traced in Chromium under load (2 of 40 quick switches beside five CPU-bound processes): the
    progress store decided to ask just before the lesson's click and its ask left 18 ms after it,
    naming the first page (Streamlit's frontend names the page it shows until the new page's run
    starts). It reached the server during the lesson's run; Streamlit ran the store's section under
    the first page after it, and the browser, told of a run of another page, emptied the lesson
    for good. Here the same two requests go in the same order: the lesson's full run must come
    back after the ask's run (ui.shell.nav.back_to_shown), and the browser's next ask be heard."""
    import asyncio
    import json
    from concurrent.futures import ThreadPoolExecutor

    from drivers.stclient import FINISHED, FRAGMENT_DONE, STORE_KEY, Learner

    en = i18n.ui("en")

    async def visit():
        async with Learner(app_url, query="lang=en", timeout_s=APP_TIMEOUT_MS / 1000) as me:  # storage None: no ask answered by itself
            await me.open()
            first = me.page_hash
            lesson = next(h for h, _, path in me.pages if path == "position")
            store = me.widget(STORE_KEY)
            ask = me.trigger_state(STORE_KEY, "stored", Learner.stored(json.loads(store.proto.json), {}))
            await me.send(page_hash=lesson)                      # the click on the lesson
            runs = [await me.next_run()]                          # its run has started when this returns... and ended
            await me.send(page_hash=first, fragment_id=store.fragment_id, trigger=ask)  # the ask, naming the page left
            while True:
                runs.append(await me.next_run())
                page, section, status = runs[-1]
                if status == FINISHED or (status == FRAGMENT_DONE and page != lesson):
                    break
            # Streamlit dropped that ask's value with the page change; the lesson's run drew the store
            # with a new count, and the browser asks again for it, under the lesson's page now.
            await me.trigger(STORE_KEY, "stored", Learner.stored(json.loads(me.widget(STORE_KEY).proto.json), {}))
            return me, lesson, first, runs

    with ThreadPoolExecutor(1) as pool:  # its own thread: Playwright's loop may hold this one
        me, lesson, first, runs = pool.submit(asyncio.run, visit()).result()
    assert runs[0][:2] == (lesson, False), runs
    assert (first, True) in [r[:2] for r in runs[1:]], runs  # the ask's section ran under the page left...
    assert runs[-1] == (lesson, False, FINISHED), runs        # ...and the lesson's full run came after it
    assert en["lesson.position.title"] in " ".join(me.texts())
    assert isinstance(json.loads(me.widget(STORE_KEY).proto.json).get("save"), dict)  # the ask was heard
