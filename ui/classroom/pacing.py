"""The teacher's pacing, on the learner's page: the join panel and the banner above the page, a
lesson not open to the class yet kept shut (from the first drawing, on the cookie's word, in a new
tab), and the lesson's visit reported."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from lib.classroom import classroom as C
from ui.classroom.access import (COOKIE, HEARD, HELD, ORDER, VISITED, class_state, gone, lesson_of, member, page_of,
                                 send, title)
from ui.classroom.join import join_panel
from ui.classroom.reports import drain
from ui.shell.core import t

BANNER_SECONDS = 10  # how often an idle learner's page looks at the pacing (one cached read): 30 learners every 6 s cost 2 replicas 11.9 % of a core idle (scripts/class_load.py), every 10 s within the 10 % goal
CSS = Path(__file__).with_name("classroom.css")  # the banner's place on the screen


def _go(lesson_id: str) -> None:
    st.switch_page(page_of(lesson_id))


def _locked(lesson: str | None, pace) -> bool:
    upto = pace.open_upto if pace is not None else None
    return lesson is not None and upto in ORDER and ORDER.index(lesson) > ORDER.index(upto)


def _banner(lesson: str | None, was_locked: bool) -> None:
    """The teacher's lead, as a banner with a button to go there; a fragment that looks again every
    few seconds, so an idle learner sees it come (and a lesson just closed or opened reruns the page)."""
    mine = member()
    if not mine:
        return
    drain()  # answers kept while the database was down go as soon as it answers, even on an idle page
    if not member():  # the class no longer knows this learner (removed, or the class deleted)
        st.rerun(scope="app")
    state, _, pace = class_state(mine["code"])
    if state == "gone":  # deleted or expired while the learner was idle: said at once
        gone(mine["code"])
        st.rerun(scope="app")
    if state != "ok":
        return
    if _locked(lesson, pace) != was_locked:
        st.rerun(scope="app")
    lead = pace.lead_lesson
    if lead in ORDER and lead != lesson:
        with st.container(border=True, key="class.banner"):
            st.info(t("class.banner.lead", title=title(lead)), icon="🧑‍🏫")
            if st.button(t("class.banner.go", title=title(lead)), key="class.banner_go", type="primary"):
                _go(lead)


@st.cache_resource(show_spinner=False)
def _css() -> str:
    return CSS.read_text(encoding="utf-8")


def _shut(upto: str) -> None:
    st.warning(t("class.locked", title=title(upto)))
    st.page_link(page_of(upto), label=t("class.locked.go", title=title(upto)))


def cookie_code() -> str:
    """The class code of the `itt_class` cookie ("" for none or a malformed one)."""
    raw = st.context.cookies.get(COOKIE)
    code = C.normalise_code(raw) if isinstance(raw, str) else ""
    return code if C.well_formed(code) else ""


def _held_by_cookie(lesson: str | None) -> bool:
    """Before the browser's copy of the membership has come back: is this lesson shut in the class
    the cookie names? Then it is drawn shut now, and the page runs again when the copy comes."""
    code = cookie_code() if lesson is not None and not st.session_state.get(HEARD) else ""
    if not code:
        return False
    state, _, pace = class_state(code)
    if state != "ok" or not _locked(lesson, pace):
        return False
    st.session_state[HELD] = True
    _shut(pace.open_upto)
    return True


def before_page(page) -> bool:
    """Above the page: the join panel, the teacher's banner, and the lesson's visit reported.
    Returns False when the lesson is not open to the class yet (a notice and a link instead)."""
    join_panel()
    mine = member()
    if not mine:
        return not _held_by_cookie(lesson_of(page))
    state, info, pace = class_state(mine["code"])
    if state == "gone":  # deleted or expired: the class is over for this browser too, and the learner is told
        gone(mine["code"])
        st.rerun()  # the sidebar, drawn above, shows the message
    if state == "down":
        return True
    lesson = lesson_of(page)
    locked = _locked(lesson, pace)
    st.html(f"<style>{_css()}</style>")  # style only: Streamlit puts it where it takes no space
    st.fragment(run_every=BANNER_SECONDS)(_banner)(lesson, locked)
    if locked:
        _shut(pace.open_upto)
        return False
    if lesson is not None:
        visited = st.session_state.setdefault(VISITED, set())
        if lesson not in visited and send(lambda s: s.record_visit(mine["id"], lesson)):
            visited.add(lesson)
    return True
