"""A class, from the teacher's side: start it, hand out its code, watch it live, pace it, export it.

Drawn at the top of the teachers' page. Everything that reads or changes a class goes through the
class store with the teacher's secret (lib/classroom/classroom.py checks it); this session keeps the code and
the secret (`class.teacher`) from the moment the class is started or the teacher link is opened.
The dashboard is a fragment that reruns alone every few seconds, only while the page is open.
A message for the teacher (a teacher link that is not valid, a class deleted from another tab, a
database that did not answer) stays until the teacher acts: a rerun, such as the one that restores
the browser's copy of the progress, does not take it away.

Pseudonyms are what learners typed: they are shown only by elements that render neither Markdown
nor HTML: st.dataframe (its cells are drawn as text; st.table would render Markdown in every cell,
index and header included), st.text, and a select box's options. Never st.table, st.markdown, a
message box or a label.
"""

from __future__ import annotations

import datetime as dt
import html
import logging
import time

import pandas as pd
import streamlit as st

from lib.classroom import class_board as B
from lib.classroom import class_links as L
from lib.classroom import classroom as C
from lib.course.quiz import load_bank
from lib.serving.log import failure
from ui.classroom import access
from ui.classroom.access import TEACHER, title
from ui.shell import nav
from ui.shell.core import lang, num, t
from ui.shell.downloads import built_when_clicked

REFRESH_SECONDS = 2.5
ANONYMIZE = "class.anonymize"
log = logging.getLogger(__name__)
REMOVING = "class.removing"  # the pseudonym the teacher asked to remove, waiting for the confirmation
REMOVED = "class.removed"  # (whether the removal worked, when): its notice stays through the refreshes
REMOVED_NOTICE_SECONDS = 15  # long enough to be read by a teacher who looked away, and seen by a busy browser
PROBLEM = "class.teacher_problem"  # the label of a message for the teacher, shown until they act


def _ping(s) -> bool:
    try:
        return s.ping() is not False
    except C.ClassError:
        return False
    except Exception as e:
        failure(log, "asking the class store", e, once=True)
        return False


def _on_start() -> None:
    """Callback: start a class with the name typed (optional)."""
    ss = st.session_state
    ss.pop(PROBLEM, None)
    s = access.store()
    try:
        created = s.create_class(name=(ss.get("class.start_name") or "").strip() or None)
    except C.ClassError:
        ss[PROBLEM] = "class.store_error"
        return
    except Exception as e:
        failure(log, "starting a class", e)
        ss[PROBLEM] = "class.store_error"
        return
    ss[TEACHER] = {"code": created.code, "secret": created.secret}
    ss["class.teacher_ok"] = created.code


def _on_forget() -> None:
    st.session_state.pop(TEACHER, None)
    st.session_state.pop("class.teacher_ok", None)


def _on_dismiss() -> None:
    st.session_state.pop(PROBLEM, None)


def _act(method: str, *args) -> None:
    """Callback: one teacher action on the class (pacing, joining, delete)."""
    ss = st.session_state
    ss.pop(PROBLEM, None)
    me = ss.get(TEACHER) or {}
    try:
        getattr(access.store(), method)(me.get("code"), me.get("secret"), *args)
    except C.NotTeacher:  # the class was deleted meanwhile (another tab) or has expired
        _on_forget()
        ss[PROBLEM] = "class.teacher_gone"
        return
    except C.ClassError:
        ss[PROBLEM] = "class.store_error"
        return
    except Exception as e:
        failure(log, f"the teacher's {method}", e)
        ss[PROBLEM] = "class.store_error"
        return
    access.class_state.clear()  # this session sees its own change at once
    if method == "delete_class":
        _on_forget()
        ss[PROBLEM] = "class.deleted"
    ss.pop("class.confirm_delete", None)


def _lead(lesson: str) -> None:
    """Callback: lead the class to `lesson`; a lesson the class cannot open yet is opened first
    (up to it), and the teacher is told so: a banner pointing to a shut lesson would lead nowhere."""
    ss = st.session_state
    me = ss.get(TEACHER) or {}
    try:
        pace = access.store().pacing(me.get("code"))
    except C.ClassError:
        pace = None
    except Exception as e:
        failure(log, "reading the class's pacing", e)
        pace = None
    order = access.ORDER
    shut = (pace is not None and pace.open_upto in order and lesson in order
            and order.index(lesson) > order.index(pace.open_upto))
    if shut:
        _act("set_open_upto", lesson)
        if ss.get(PROBLEM):
            return
    _act("set_lead", lesson)
    if shut and not ss.get(PROBLEM):
        ss["class.pace.note"] = lesson


def _teacher() -> dict | None:
    """The class of this session's teacher, checked once per code and secret; None otherwise."""
    ss = st.session_state
    me = ss.get(TEACHER)
    if not me:
        return None
    if ss.get("class.teacher_ok") != me["code"]:
        try:
            ok = bool(me["code"]) and access.store().verify_teacher(me["code"], me["secret"])
        except C.ClassError:
            ok = False
        except Exception as e:
            failure(log, "checking a teacher link", e)
            ok = False
        if not ok:
            ss[PROBLEM] = "class.bad_key"  # shown by render until the teacher acts
            _on_forget()
            return None
        ss["class.teacher_ok"] = me["code"]
    return me


def render(root: str) -> None:
    """The teachers' page's class section: start a class, or the class of this session."""
    ss = st.session_state
    st.header(t("class.start.header"))
    s = access.store()
    if s is None or not _ping(s):
        st.error(t("class.unreachable"))
        return
    me = _teacher()
    info = None
    if me is not None:
        info = s.class_info(me["code"])
        if info is None:  # deleted from another tab, or expired, since this page checked the link
            _on_forget()
            ss[PROBLEM] = "class.teacher_gone"
            me = None
    problem = ss.get(PROBLEM)
    if problem:
        with st.container(key="class.teacher_notice"):
            (st.success if problem == "class.deleted" else st.error)(t(problem))
            st.button(t("class.notice.close"), key="class.teacher_notice_close", on_click=_on_dismiss)
    if me is None:
        st.markdown(t("class.start.intro"))
        with st.form("class.start_form", border=False):
            st.text_input(t("class.start.name"), key="class.start_name", max_chars=60,
                          placeholder=t("class.start.name_placeholder"))
            st.form_submit_button(t("class.start.button"), on_click=_on_start, type="primary")
        return
    _handout(root, info, me)
    st.fragment(run_every=REFRESH_SECONDS)(_live)(me["code"], me["secret"])
    _pacing(me)
    _export(me)


def _handout(root: str, info, me: dict) -> None:
    """The code (big), the join link and its QR code, the private teacher link."""
    link = L.join_link(root, info.code, lang())
    left, right = st.columns([3, 2])
    with left:
        if info.name:
            st.text(info.name)
        st.caption(t("class.code"))
        st.html(f"<p style='font-size:3.5rem;font-family:monospace;letter-spacing:.25em;margin:0'>"
                f"{html.escape(info.code)}</p>")
        st.caption(t("class.join_link"))
        st.code(link, language=None, wrap_lines=True)
        st.caption(t("class.teacher_link"))
        st.code(L.teacher_link(root, info.code, me["secret"], lang()), language=None, wrap_lines=True)
        expires = dt.datetime.fromtimestamp(info.expires_at, dt.timezone.utc)
        st.caption(t("class.expires", date=expires.strftime("%Y-%m-%d")))
        st.button(t("class.forget"), key="class.forget", on_click=_on_forget)
    right.image(_qr(link), alt=t("class.qr_alt", code=info.code), width=260)


@st.cache_data(max_entries=32, show_spinner=False)
def _qr(link: str) -> bytes:
    return L.qr_png(link)


def _live(code: str, secret: str) -> None:
    """The dashboard: redrawn alone every few seconds."""
    st.subheader(t("class.dash.header"))
    st.caption(t("class.dash.refresh"))
    s = access.store()
    try:
        board = s.dashboard(code, secret)
    except C.NotTeacher:  # deleted from another tab, or expired: the whole page says so
        _on_forget()
        st.session_state[PROBLEM] = "class.teacher_gone"
        st.rerun(scope="app")
    except C.ClassError:
        st.error(t("class.unreachable"))
        return
    except Exception as e:
        failure(log, "reading the dashboard", e, once=True)
        st.error(t("class.unreachable"))
        return
    anonymize = st.toggle(t("class.dash.anonymize"), key=ANONYMIZE)
    st.metric(t("class.dash.learners"), num(len(board.learners)))
    removed = st.session_state.get(REMOVED)
    if removed is not None and time.monotonic() - removed[1] < REMOVED_NOTICE_SECONDS:
        (st.success if removed[0] else st.error)(t("class.remove.done" if removed[0] else "class.store_error"))
    elif removed is not None:
        del st.session_state[REMOVED]
    if not board.learners:
        st.info(t("class.dash.none"))
        return
    _board(board, anonymize)
    _remove(board, anonymize)


def _board(board, anonymize: bool) -> None:
    """The four tables: learners × lessons, where they are now, the most missed, every question."""
    order = access.ORDER
    st.markdown(f"**{t('class.dash.grid')}**")
    st.caption(t("class.dash.grid_help"))
    cols = [t("class.dash.col.learner"), t("class.dash.col.now"), *(title(x) for x in order[:-1]),
            t("class.dash.col.final")]
    rows = B.titled(B.grid(board, order[:-1], anonymize, t("class.dash.learner_n"), t("class.dash.visited")),
                    title, column=1)
    # st.dataframe draws its cells as text: a pseudonym such as "![p](http://host/p.png)" stays those
    # characters (st.table would fetch the image, make a link, colour text or set a formula).
    st.dataframe(pd.DataFrame(rows, columns=cols), hide_index=True, key="class.grid",
                 column_config={cols[0]: st.column_config.TextColumn(pinned=True)})
    left, right = st.columns([1, 2])
    with left:
        st.markdown(f"**{t('class.dash.now')}**")
        here = B.titled(B.on_lesson(board, order), title)
        st.dataframe(pd.DataFrame(here, columns=[t("class.dash.col.lesson"), t("class.dash.col.count")]),
                     hide_index=True, key="class.here")
    questions = _questions()
    q_cols = [t("class.dash.col.lesson"), t("class.dash.col.question"), t("class.dash.col.answers"),
              t("class.dash.col.right"), t("class.dash.col.answer")]
    pct = st.column_config.ProgressColumn(q_cols[3], format="percent", min_value=0.0, max_value=1.0)
    with right:
        st.markdown(f"**{t('class.dash.missed')}**")
        missed = B.titled(B.question_rows(board.most_wrong, questions, unknown=t("class.dash.unknown_answer")), title)
        st.dataframe(pd.DataFrame(missed, columns=q_cols), hide_index=True, key="class.missed",
                     column_config={q_cols[3]: pct})
    st.markdown(f"**{t('class.dash.questions')}**")
    every = B.titled(B.question_rows(board.questions, questions, unknown=t("class.dash.unknown_answer")), title)
    if every:
        st.dataframe(pd.DataFrame(every, columns=q_cols), hide_index=True, key="class.questions",
                     column_config={q_cols[3]: pct})
    else:
        st.caption(t("class.dash.no_answers"))


def _ask_remove() -> None:
    """Callback: "remove" pressed; the confirmation names the learner chosen."""
    st.session_state[REMOVING] = st.session_state.get("class.remove_choice")


def _on_remove(pseudonym: str) -> None:
    """Callback: the removal confirmed; the learner and everything they sent leave the class."""
    ss = st.session_state
    me = ss.get(TEACHER) or {}
    ss.pop(REMOVING, None)
    try:
        access.store().remove_learner(me.get("code"), me.get("secret"), pseudonym)
        ss[REMOVED] = (True, time.monotonic())
    except C.ClassError:  # NotTeacher or a database that does not answer
        ss[REMOVED] = (False, time.monotonic())
    except Exception as e:
        failure(log, "removing a learner", e)
        ss[REMOVED] = (False, time.monotonic())


def _remove(board, anonymize: bool) -> None:
    """Remove one learner (an unwelcome pseudonym): choose, then confirm. Names as plain text; with
    the anonymize switch on, the same stand-ins as the grid ("Learner 2"), so a projector shows no
    pseudonym here either."""
    ss = st.session_state
    pseudonyms = [r.pseudonym for r in board.learners]
    shown = dict(zip(pseudonyms, L.display_names(pseudonyms, anonymize, t("class.dash.learner_n"))))
    pending = ss.get(REMOVING)
    with st.expander(t("class.remove.header"), expanded=pending is not None):
        if pending not in shown:  # nothing asked, or that learner has gone meanwhile
            ss.pop(REMOVING, None)
            st.caption(t("class.remove.help"))
            st.selectbox(t("class.remove.who"), pseudonyms, format_func=lambda x: shown.get(x, ""),
                         key="class.remove_choice")
            st.button(t("class.remove.button"), key="class.remove", on_click=_ask_remove)
            return
        st.warning(t("class.remove.confirm"))
        st.text(shown[pending])  # the learner's own text: never markup
        c1, c2 = st.columns(2)
        c1.button(t("class.remove.yes"), key="class.remove_yes", type="primary", on_click=_on_remove, args=(pending,))
        c2.button(t("class.remove.no"), key="class.remove_no", on_click=lambda: ss.pop(REMOVING, None))


def _questions() -> dict:
    """Every lesson question by (lesson, id), in the teacher's language."""
    return {(x.id, q.id): q for x in nav.LESSONS for q in load_bank(lang(), x.id)}


def _lesson_options() -> list[str]:
    return access.ORDER


def _pacing(me: dict) -> None:
    """Lead the class to a lesson; open lessons up to one; joining open or closed. All undoable."""
    st.subheader(t("class.pace.header"))
    pace = access.store().pacing(me["code"])
    info = access.store().class_info(me["code"])
    options = _lesson_options()
    names = {x: title(x) for x in options}  # the words of this run's language, not of the caller's
    c1, c2 = st.columns(2)
    with c1:
        lead = st.selectbox(t("class.pace.lesson"), options, format_func=lambda x: names.get(x, x), key="class.lead_choice")
        st.button(t("class.pace.lead"), key="class.lead", on_click=_lead, args=(lead,))
        opened = st.session_state.pop("class.pace.note", None)
        if opened:
            st.info(t("class.pace.lead_opened", title=title(opened)))
        if pace.lead_lesson:
            st.info(t("class.pace.leading", title=title(pace.lead_lesson)))
            st.button(t("class.pace.unlead"), key="class.unlead", on_click=_act, args=("set_lead", None))
    with c2:
        upto = st.selectbox(t("class.pace.lesson"), options, format_func=lambda x: names.get(x, x), key="class.upto_choice")
        st.button(t("class.pace.open_upto"), key="class.upto", on_click=_act, args=("set_open_upto", upto))
        if pace.open_upto:
            st.info(t("class.pace.opened", title=title(pace.open_upto)))
            st.button(t("class.pace.open_all"), key="class.open_all", on_click=_act, args=("set_open_upto", None))
        else:
            st.caption(t("class.pace.all_open"))
    st.session_state["class.joining"] = bool(info.joining_open)
    st.toggle(t("class.joining"), key="class.joining",
              on_change=lambda: _act("set_joining", bool(st.session_state.get("class.joining"))))


def _csv(code: str, secret: str) -> bytes:
    """The class's CSV as UTF-8 with a byte order mark: without it Excel reads the file in the
    machine's legacy code page and garbles accents, emoji and Arabic pseudonyms."""
    return access.store().export_csv(code, secret).encode("utf-8-sig")


def _export(me: dict) -> None:
    """The results as CSV (built when clicked), and deleting the class after a confirmation."""
    ss = st.session_state
    st.subheader(t("class.export.header"))
    code, secret = me["code"], me["secret"]
    st.download_button(t("class.export.csv"), file_name=f"class-{code}.csv", mime="text/csv", key="class.export",
                       data=built_when_clicked(lambda: _csv(code, secret), "text/csv", f"class-{code}.csv"),
                       on_click="ignore")
    if not ss.get("class.confirm_delete"):
        st.button(t("class.delete"), key="class.delete",
                  on_click=lambda: ss.__setitem__("class.confirm_delete", True))
        return
    st.warning(t("class.delete_confirm"))
    c1, c2 = st.columns(2)
    c1.button(t("class.delete_yes"), key="class.delete_yes", type="primary", on_click=_act, args=("delete_class",))
    c2.button(t("class.delete_no"), key="class.delete_no", on_click=lambda: ss.pop("class.confirm_delete", None))
