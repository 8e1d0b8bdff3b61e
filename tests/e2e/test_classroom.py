"""A live class in Chromium: one teacher and three learners, each in their own browser context.

The teacher starts a class on the teachers' page; the learners open the join link, one of them with
a pseudonym that is an HTML tag with a script in it; each answers a question; the teacher's
dashboard shows them and their answers within seconds, anonymizes them for a projector, leads the
class to another lesson (the learners' banner appears), and exports the results as CSV, which must
match the class store's own export. No dialog may open and no image may load from the pseudonym.
"""

from __future__ import annotations

import re

import pytest

from lib.classroom.classroom import ClassStore
from lib.course import i18n
from lib.course.quiz import load_bank
from drivers.browser import APP_TIMEOUT_MS, SERVER_WARM_TIMEOUT_MS, click, goto, type_text

pytestmark = pytest.mark.e2e

XSS = "<img src=x onerror=alert(1)>"
DASHBOARD_MS = 5_000  # the dashboard refreshes every 2.5 s: an answer shows within two refreshes


def _context(browser, dialogs: list):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    context.route("**/*", lambda route: route.continue_() if "127.0.0.1" in route.request.url
                  else route.abort("blockedbyclient"))
    pg = context.new_page()
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    from drivers.browser import track

    track(pg)
    return context, pg


def _cells(grid, text: str):
    """The grid's cells that read exactly `text`."""
    return grid.locator("[role=gridcell]").filter(has_text=re.compile(f"^{re.escape(text)}$"))


def test_a_teacher_and_three_learners_run_a_class(browser, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    dialogs: list[str] = []
    contexts = []
    try:
        tctx, teacher = _context(browser, dialogs)
        contexts.append(tctx)
        goto(teacher, f"{app_url}/teachers?lang=en", en["teachers.title"])
        click(teacher, teacher.get_by_role("button", name=en["class.start.button"]))
        join = teacher.locator('[data-testid="stCode"]').first.inner_text().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?lang=en&class=[A-Z2-9]{6}", join), join
        secret_link = teacher.locator('[data-testid="stCode"]').nth(1).inner_text().strip()
        code = join.rsplit("=", 1)[1]
        key = secret_link.rsplit("key=", 1)[1]
        expect(teacher.get_by_role("img", name=i18n.fill(en["class.qr_alt"], code=code))).to_be_visible()

        q = {q.id: q for q in load_bank("en", "numbers")}["kv_per_layer"]  # a prompt with no formula
        names = ["Ada", "Bea", XSS]
        learners = []
        for i, name in enumerate(names):
            ctx, pg = _context(browser, dialogs)
            contexts.append(ctx)
            goto(pg, join, en["lesson.numbers.title"], timeout=SERVER_WARM_TIMEOUT_MS)  # a busy 2-core machine
            expect(pg.get_by_text(en["class.join.privacy"].split("**")[0].strip())).to_be_visible(timeout=APP_TIMEOUT_MS)
            box = pg.get_by_role("textbox", name=en["class.join.pseudonym"])
            type_text(pg, box, name, submit=None)
            panel = pg.locator('[data-testid="stForm"]').filter(has=box)
            click(pg, panel.get_by_role("button", name=en["class.join.button"], exact=True))
            sidebar = pg.locator('[data-testid="stSidebar"]')
            expect(sidebar.get_by_text(name, exact=True)).to_be_visible(timeout=APP_TIMEOUT_MS)
            form = pg.locator('[data-testid="stForm"]').filter(has_text=q.prompt[:40]).first
            form.scroll_into_view_if_needed()
            option = int(q.answer) if i < 2 else (int(q.answer) + 1) % len(q.options)  # two right, one wrong
            click(pg, form.get_by_text(q.options[option], exact=True), rerun=False)
            click(pg, form.get_by_role("button", name=en["quiz.check"]))
            learners.append(pg)

        # The dashboard, refreshed by itself: every learner, and their first answer in lesson 1's
        # column (two right, one wrong). The grid is an st.dataframe, drawn on a canvas; its cells are
        # also in the page as an accessible table (role gridcell), as text.
        grid = teacher.locator('[data-testid="stDataFrame"]').first
        expect(grid).to_be_visible(timeout=DASHBOARD_MS)
        for name in names:
            expect(_cells(grid, name)).to_have_count(1, timeout=DASHBOARD_MS)
        expect(_cells(grid, "✓ 1/1")).to_have_count(2, timeout=DASHBOARD_MS)
        expect(_cells(grid, "✓ 0/1")).to_have_count(1, timeout=DASHBOARD_MS)
        assert teacher.locator("img[src='x']").count() == 0 and not dialogs

        click(teacher, teacher.get_by_text(en["class.dash.anonymize"]))
        expect(_cells(grid, i18n.fill(en["class.dash.learner_n"], n="3"))).to_have_count(1, timeout=DASHBOARD_MS)
        for name in names:
            expect(teacher.get_by_text(name, exact=True)).to_have_count(0, timeout=DASHBOARD_MS)

        # Lead the class to lesson 5: each learner's banner comes by itself.
        click(teacher, teacher.get_by_role("combobox", name=en["class.pace.lesson"]).first, rerun=False)
        click(teacher, teacher.get_by_role("option", name=en["lesson.attention.title"], exact=True))
        click(teacher, teacher.get_by_role("button", name=en["class.pace.lead"]))
        banner = i18n.fill(en["class.banner.lead"], title=en["lesson.attention.title"])
        for pg in learners:
            expect(pg.get_by_text(banner)).to_be_visible(timeout=APP_TIMEOUT_MS)
        go = learners[0].get_by_role("button", name=i18n.fill(en["class.banner.go"], title=en["lesson.attention.title"]))
        click(learners[0], go)
        expect(learners[0].locator("h1").first).to_have_text(en["lesson.attention.title"], timeout=APP_TIMEOUT_MS)

        # The CSV the teacher downloads is the store's own export of the class.
        with teacher.expect_download() as download:
            teacher.get_by_role("button", name=en["class.export.csv"]).click()
        csv = open(download.value.path(), encoding="utf-8-sig").read()  # with a byte order mark, for Excel
        assert csv == ClassStore.from_env().export_csv(code, key)
        assert len(csv.strip().splitlines()) == 1 + 3 and XSS in csv

        for pg in learners:
            assert pg.locator("img[src='x']").count() == 0
            assert pg.locator('[data-testid="stException"]').count() == 0
        assert not dialogs, dialogs
        ClassStore.from_env().delete_class(code, key)
    finally:
        for c in contexts:
            c.close()


def test_a_reload_keeps_the_class_and_an_answer_after_it_counts(browser, app_url):
    """A learner joins and answers; the page is reloaded (a new session on the server): the sidebar
    shows the class and the pseudonym again, the first verdict is back, and an answer given after the
    reload reaches the class for the same learner (one learner, two first answers)."""
    from playwright.sync_api import expect

    from drivers.browser import runs_of, settle, wait_for_app

    en = i18n.ui("en")
    store = ClassStore.from_env()  # the app's own database (the server inherits the environment)
    created = store.create_class("Reload")
    bank = {q.id: q for q in load_bank("en", "numbers")}
    before, after = bank["kv_per_layer"], bank["gqa_saving"]  # prompts with no formula
    dialogs: list[str] = []
    context, pg = _context(browser, dialogs)
    try:
        goto(pg, f"{app_url}/?lang=en&class={created.code}", en["lesson.numbers.title"], timeout=SERVER_WARM_TIMEOUT_MS)
        box = pg.get_by_role("textbox", name=en["class.join.pseudonym"])
        type_text(pg, box, "Reloader", submit=None)
        panel = pg.locator('[data-testid="stForm"]').filter(has=box)
        click(pg, panel.get_by_role("button", name=en["class.join.button"], exact=True))
        sidebar = pg.locator('[data-testid="stSidebar"]')
        expect(sidebar.get_by_text("Reloader", exact=True)).to_be_visible(timeout=APP_TIMEOUT_MS)

        verdicts = pg.get_by_text(en["quiz.right"])

        def answer(q, right_so_far: int) -> None:
            form = pg.locator('[data-testid="stForm"]').filter(has_text=q.prompt[:40]).first
            form.scroll_into_view_if_needed()
            click(pg, form.get_by_text(q.options[int(q.answer)], exact=True), rerun=False)
            click(pg, form.get_by_role("button", name=en["quiz.check"]))
            expect(verdicts).to_have_count(right_so_far, timeout=APP_TIMEOUT_MS)

        answer(before, 1)
        assert f"class={created.code}" not in pg.url  # the code left the address on joining
        # F5: a new session, which gets the membership back from the browser's storage.
        runs_of(pg).reset()
        pg.reload()
        wait_for_app(pg, en["lesson.numbers.title"], timeout=APP_TIMEOUT_MS)
        pg.wait_for_function("document.documentElement.dataset.ittProgress === 'ready'", timeout=APP_TIMEOUT_MS)
        settle(pg)
        expect(sidebar.get_by_text(f"Reload ({created.code})", exact=True)).to_be_visible(timeout=APP_TIMEOUT_MS)
        expect(sidebar.get_by_text("Reloader", exact=True)).to_be_visible(timeout=APP_TIMEOUT_MS)
        expect(sidebar.get_by_role("button", name=en["class.side.leave"])).to_be_visible()
        expect(pg.get_by_role("textbox", name=en["class.join.pseudonym"])).to_have_count(0)  # no second join
        expect(verdicts).to_have_count(1, timeout=APP_TIMEOUT_MS)  # the first verdict, back from the browser

        answer(after, 2)
        board = store.dashboard(created.code, created.secret)
        assert [r.pseudonym for r in board.learners] == ["Reloader"]
        assert sorted((q.question_id, q.answered, q.right) for q in board.questions) == sorted(
            [(before.id, 1, 1), (after.id, 1, 1)])
        assert board.learners[0].scores == {"numbers": (2, 2)}
        assert pg.locator('[data-testid="stException"]').count() == 0 and not dialogs
    finally:
        context.close()
        store.delete_class(created.code, created.secret)
