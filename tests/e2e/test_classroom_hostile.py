"""A class joined by mischievous pseudonyms, in Chromium: the teacher's dashboard shows each as the
characters typed, never as markup.

Five learners pick pseudonyms that are HTML, a Markdown image and link to a host on this machine, a
bare address (an autolink), and Streamlit's coloured text with a formula. One of them joins through
the browser; the others through the class store, as the page's join does. On the teacher's page
(the grid, where they are now, the remove list and its confirmation) there must be no image, link,
coloured text or formula made of them, no request to that host, no dialog; and the CSV the teacher
downloads has a byte order mark and holds them as text.

The same with a server of the app on PostgreSQL, the store a class behind nginx shares (the learner
and the teacher on that server; replicas sharing one database are e2e/test_replicas.py's and
test_compose.py's); skipped only where PostgreSQL is not installed and CI is not set (tests/ci.py).
"""

from __future__ import annotations

import os
import re

import pytest

from drivers.browser import APP_TIMEOUT_MS, REPO, SERVER_WARM_TIMEOUT_MS, click, goto, serve, type_text
from lib.classroom.classroom import DATABASE_ENV, ClassStore
from lib.course import i18n

pytestmark = pytest.mark.e2e

TRAP = "127.0.0.1:9"  # nothing listens on port 9: a request there is only seen, never answered
HOSTILE = ["<img src=x onerror=alert(1)>", f"![p](http://{TRAP}/p.png)", f"[l](http://{TRAP})",
           f"see http://{TRAP}/u", ":red[R] $x^2$"]
DASHBOARD_MS = 8_000  # the dashboard refreshes every 2.5 s


def _context(browser, dialogs: list, requests: list):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    context.route("**/*", lambda route: route.continue_() if "127.0.0.1" in route.request.url
                  else route.abort("blockedbyclient"))
    pg = context.new_page()
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.on("request", lambda r: requests.append(r.url) if TRAP in r.url else None)
    from drivers.browser import track

    track(pg)
    return context, pg


def _no_markup_of_them(pg) -> None:
    """Nothing on the page was made of a hostile pseudonym."""
    assert pg.locator("img[src='x'], img[src*='127.0.0.1:9']").count() == 0
    assert pg.locator("a[href*='127.0.0.1:9']").count() == 0
    # Streamlit's :red[...] is a span coloured by its class or style; $...$ is a KaTeX formula.
    assert pg.locator("[class*='ColoredText'], span[style*='color']").filter(has_text=re.compile(r"^R$")).count() == 0
    formulas = pg.locator(".katex annotation").evaluate_all("els => els.map(e => e.textContent.trim())")
    assert "x^2" not in formulas, formulas  # the lesson's own formulas aside


@pytest.fixture(scope="module")
def on_postgres(postgres):
    """(database URL, server URL): a server of the app on one new PostgreSQL database."""
    url = postgres.new_database()
    before = os.environ.get(DATABASE_ENV)
    os.environ[DATABASE_ENV] = url  # the server inherits the environment
    try:
        with serve(REPO / "app.py") as server:
            yield url, server
    finally:
        if before is None:
            os.environ.pop(DATABASE_ENV, None)
        else:
            os.environ[DATABASE_ENV] = before


@pytest.mark.parametrize("where", ["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def test_hostile_pseudonyms_are_text_on_the_teachers_dashboard_and_in_the_csv(browser, request, where):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    if where == "sqlite":  # one server on the app's own database (the server inherits the environment)
        learner_url = teacher_url = request.getfixturevalue("app_url")
        store = ClassStore.from_env()
    else:  # a server on a PostgreSQL database
        database, learner_url = request.getfixturevalue("on_postgres")
        teacher_url = learner_url
        store = ClassStore(database)
    created = store.create_class("Hostile")
    dialogs: list[str] = []
    requests: list[str] = []
    contexts = []
    try:
        # One joins through the page (the sidebar shows the pseudonym to its learner)...
        lctx, learner = _context(browser, dialogs, requests)
        contexts.append(lctx)
        goto(learner, f"{learner_url}/?lang=en&class={created.code}", en["lesson.numbers.title"],
             timeout=SERVER_WARM_TIMEOUT_MS)
        box = learner.get_by_role("textbox", name=en["class.join.pseudonym"])
        type_text(learner, box, HOSTILE[-1], submit=None)
        panel = learner.locator('[data-testid="stForm"]').filter(has=box)
        click(learner, panel.get_by_role("button", name=en["class.join.button"], exact=True))
        sidebar = learner.locator('[data-testid="stSidebar"]')
        expect(sidebar.get_by_text(HOSTILE[-1], exact=True)).to_be_visible(timeout=APP_TIMEOUT_MS)
        _no_markup_of_them(learner)
        # ... the others as the join does it, each with an answer.
        for name in HOSTILE[:-1]:
            store.record_answer(store.join(created.code, name).id, "numbers", "kv_per_layer", "1", False)

        tctx, teacher = _context(browser, dialogs, requests)
        contexts.append(tctx)
        goto(teacher, f"{teacher_url}/teachers?lang=en&class={created.code}&key={created.secret}",
             en["class.dash.header"], timeout=SERVER_WARM_TIMEOUT_MS)
        grid = teacher.locator('[data-testid="stDataFrame"]').first
        expect(grid).to_be_visible(timeout=DASHBOARD_MS)
        expect(teacher.get_by_text(en["class.dash.grid"], exact=True)).to_be_visible()
        # Each pseudonym is one cell of the grid, its characters as typed (the grid's cells are also
        # in the page as an accessible table: text nodes).
        for name in HOSTILE:
            cell = grid.locator("[role=gridcell]").filter(has_text=re.compile(f"^{re.escape(name)}$"))
            expect(cell).to_have_count(1, timeout=DASHBOARD_MS)
        teacher.wait_for_timeout(3_000)  # at least one refresh of the dashboard
        _no_markup_of_them(teacher)

        # The remove list: each pseudonym as an option, in its characters.
        teacher.get_by_text(en["class.remove.header"]).click()
        click(teacher, teacher.get_by_role("combobox", name=en["class.remove.who"]), rerun=False)
        options = teacher.get_by_role("option")
        expect(options).to_have_count(len(HOSTILE), timeout=APP_TIMEOUT_MS)
        assert sorted(options.all_inner_texts()) == sorted(HOSTILE)
        _no_markup_of_them(teacher)
        click(teacher, options.filter(has_text="![p]"), rerun=False)  # the first, already chosen: no run
        click(teacher, teacher.get_by_role("button", name=en["class.remove.button"]))
        # The confirmation names the learner as text.
        expect(teacher.locator('[data-testid="stText"]').filter(has_text=HOSTILE[1])).to_be_visible(
            timeout=APP_TIMEOUT_MS)
        _no_markup_of_them(teacher)

        # The CSV: a byte order mark for Excel, the pseudonyms as typed.
        with teacher.expect_download() as download:
            teacher.get_by_role("button", name=en["class.export.csv"]).click()
        raw = open(download.value.path(), "rb").read()
        assert raw.startswith(b"\xef\xbb\xbf")
        csv = raw.decode("utf-8-sig")
        assert csv == store.export_csv(created.code, created.secret)
        for name in HOSTILE:
            assert name in csv

        assert not requests, requests
        assert not dialogs, dialogs
        for pg in (teacher, learner):
            assert pg.locator('[data-testid="stException"]').count() == 0
    finally:
        for c in contexts:
            c.close()
        store.delete_class(created.code, created.secret)
        store.close()
