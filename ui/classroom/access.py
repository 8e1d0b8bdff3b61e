"""The class store, and this session's place in a class: the session's keys, the store shared by
every session, the class's state read a few seconds old at most, and the one way to write to the store
(`send`), which forgets a membership the class no longer knows (`gone`).
"""

from __future__ import annotations

import logging

import streamlit as st

from lib.classroom import classroom as C
from lib.serving.log import failure
from ui.shell import nav
from ui.shell.core import t

MEMBER = "class.member"  # {"code", "id", "pseudonym"}: this session's membership
PENDING = "class.pending"  # a class code waiting for the learner's pseudonym (the join panel)
NOTICE = "class.notice"  # (kind, label): shown in the sidebar until the learner acts or closes it
QUEUE = "class.queue"  # answers and scores waiting to be sent (a callback queues, the page sends)
VISITED = "class.visited"  # lessons already reported in this session
FIRSTS = "quiz.firsts"  # {"lesson:qid": [answer, correct]}: each first answer as given (cleared with the quiz's state)
SENT = "class.sent"  # "lesson:qid" of the first answers already handed to the queue in this membership
SUGGESTED = "class.suggested"  # the pseudonym the join panel proposes: its box's default, so its first drawing shows it
TEACHER = "class.teacher"  # {"code", "secret"}: the teachers' page of this session
OFFLINE = "class.offline"  # the store did not answer at the last try
HEARD = "class.heard"  # the browser's copy of the membership has come back (or there was none)
HELD = "class.held"  # a lesson was kept shut before that, on the cookie's word: run the page again then
COOKIE = "itt_class"  # the class code this browser's learner is in (no key): the browser writes it
PACING_SECONDS = 3  # how stale a learner's view of the pacing may be
ORDER = [x.id for x in nav.LESSONS] + [nav.FINAL.id]  # the path that "open up to" cuts
log = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False)
def store():
    """The class store shared by every session; None when it cannot even be set up (bad URL)."""
    try:
        return C.ClassStore.from_env()
    except Exception as e:  # a malformed ITT_DATABASE_URL, a missing driver: the course goes on without classes
        failure(log, "setting up the class store", e)
        return None


@st.cache_data(ttl=PACING_SECONDS, max_entries=256, show_spinner=False)
def class_state(code: str) -> tuple[str, object, object]:
    """("ok", class info, pacing), ("gone", None, None) or ("down", None, None), a few seconds old at most."""
    s = store()
    if s is None:
        return "down", None, None
    try:
        info = s.class_info(code)
        if info is None:
            return "gone", None, None
        return "ok", info, s.pacing(code)
    except C.ClassError:  # StoreUnavailable (the store logs it), or the class gone between the two reads
        return "down", None, None
    except Exception as e:
        failure(log, "reading a class's pacing", e, once=True)
        return "down", None, None


def member() -> dict | None:
    return st.session_state.get(MEMBER)


def title(lesson_id: str) -> str:
    """A lesson's title; an id the course does not know (a newer replica's) as it is."""
    if lesson_id not in ORDER:
        return str(lesson_id)
    return t("final.title") if lesson_id == nav.FINAL.id else t(f"lesson.{lesson_id}.title")


def page_of(lesson_id: str) -> str:
    return nav.FINAL.path if lesson_id == nav.FINAL.id else next(x.path for x in nav.LESSONS if x.id == lesson_id)


def lesson_of(page) -> str | None:
    """The lesson id of a page of st.navigation (lessons and the final quiz), else None."""
    path = getattr(page, "url_path", "") or nav.LESSONS[0].id
    if path == "home":
        path = nav.LESSONS[0].id
    return path if path in ORDER else None


def forget() -> dict | None:
    """This session is no longer in a class (the browser's copy follows at the end of the run).
    The learner's answers stay theirs: only the membership and what waited to be sent go."""
    ss = st.session_state
    for key in (QUEUE, VISITED, SENT, "class.final_sent", OFFLINE):
        ss.pop(key, None)
    return ss.pop(MEMBER, None)


def gone(code: str) -> None:
    """The class no longer knows this learner: forget the membership and say why, until they act."""
    s = store()
    try:
        deleted = s is None or s.class_info(code) is None
    except C.ClassError:  # the database went away meanwhile: the class is over for this browser either way
        deleted = True
    except Exception as e:
        failure(log, "reading a class", e)
        deleted = True
    class_state.clear()
    forget()
    st.session_state[NOTICE] = ("warning", "class.gone.deleted" if deleted else "class.gone.removed")


def send(call) -> bool:
    """Run one write on the store; False (and the sidebar's notice) when it does not answer."""
    s = store()
    ok = False
    if s is not None:
        try:
            call(s)
            ok = True
        except C.UnknownLearner:  # removed by the teacher, the class deleted, or they left on another tab
            mine = member()
            if mine:
                gone(mine["code"])
            return True
        except C.ClassError:  # StoreUnavailable (the store logs it): the lesson goes on
            ok = False
        except Exception as e:
            failure(log, "sending to the class", e, once=True)
            ok = False
    st.session_state[OFFLINE] = not ok
    return ok
