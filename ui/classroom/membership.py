"""A class, from the learner's side: joining, the sidebar's class box, pacing, and what is reported.

A teacher starts a class on the teachers' page (ui/classroom/teacher.py); a learner joins with the link
`/?class=CODE` (any page) or the code typed in the sidebar, and picks a pseudonym. From then on this
module reports to the class store (lib/classroom/classroom.py): each lesson opened (once per lesson and
session), the first answer to each quiz question, and the final quiz's score. The learner's own text
is never sent. Without a class nothing here touches the store and the course runs as before.

First answers: each is kept as given when it is given (`quiz.firsts`, with the quiz's state: the
option's index or the number read from the box, and its own verdict), in the session and in the
browser. Whatever first answers the session knows and the class has not been handed yet go at the
end of every run (`flush`): so answers given before joining go on joining, and again once the
browser's copy of the progress has come back (it may come after the join); the store keeps only the
first of each, so sending twice changes nothing.

Messages that need the learner (a wrong code, a class that is gone) stay in the sidebar until the
learner acts (joins, types a code, closes the message): a rerun, such as the one that restores the
browser's copy, does not take them away. A learner removed by the teacher, or whose class was
deleted, is told at their next report or by the idle check of the pacing; their answers stay in
their browser.

Membership lives in session state (`class.member`) and in the browser's local storage next to the
learner's progress (ui/learner/persist.py hands it over), so a reload keeps it. A new tab's session hears of
it only after its first run; so the class's code (not the learner's key) is also kept in a cookie,
`itt_class`, which the server reads at that first run: a lesson the class has not opened yet stays
shut from the first drawing, and the page runs again once the browser's copy has come back.

The store is shared by every session (`st.cache_resource`); what every page run asks of it (the
class's pacing) is cached for a few seconds, so thirty learners cost a few queries a second at most.
A database that does not answer never stops a lesson: the sidebar says the answers are not reaching
the class, and they are sent when it answers again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path

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
BANNER_SECONDS = 10  # how often an idle learner's page looks at the pacing (one cached read): 30 learners every 6 s cost 2 replicas 11.9 % of a core idle (scripts/class_load.py), every 10 s within the 10 % goal
MAX_TYPED = 200  # characters the pseudonym box takes (more than a pseudonym may have, see _on_join)
MAX_QUEUE = 500  # reports kept while the database is down (every lesson question and then some)
ORDER = [x.id for x in nav.LESSONS] + [nav.FINAL.id]  # the path that "open up to" cuts
CSS = Path(__file__).with_name("classroom.css")  # the banner's place on the screen
log = logging.getLogger(__name__)


# ------------------------------------------------------------------------- the store

@st.cache_resource(show_spinner=False)
def store():
    """The class store shared by every session; None when it cannot even be set up (bad URL)."""
    try:
        return C.ClassStore.from_env()
    except Exception as e:  # a malformed ITT_DATABASE_URL, a missing driver: the course goes on without classes
        failure(log, "setting up the class store", e)
        return None


@st.cache_data(ttl=PACING_SECONDS, max_entries=256, show_spinner=False)
def _class_state(code: str) -> tuple[str, object, object]:
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


def _page_of(lesson_id: str) -> str:
    return nav.FINAL.path if lesson_id == nav.FINAL.id else next(x.path for x in nav.LESSONS if x.id == lesson_id)


def lesson_of(page) -> str | None:
    """The lesson id of a page of st.navigation (lessons and the final quiz), else None."""
    path = getattr(page, "url_path", "") or nav.LESSONS[0].id
    if path == "home":
        path = nav.LESSONS[0].id
    return path if path in ORDER else None


# ------------------------------------------------------------------------- the address

def take_params(page) -> None:
    """Before the share link's parameters are read: `class=` (and the teacher's `key=`) leave the
    address bar into session state, so a reload or a shared screen never shows the key."""
    code = st.query_params.get("class")
    if code is None:
        return
    key = st.query_params.get("key")
    for name in ("class", "key"):
        if name in st.query_params:
            del st.query_params[name]
    code = C.normalise_code(code) or ""
    if key is not None:
        st.session_state[TEACHER] = {"code": code, "secret": key.strip()}
        st.session_state.pop("class.teacher_ok", None)
        st.session_state.pop("class.teacher_problem", None)  # a new link: the last one's message is past
        return
    mine = member()
    if mine and mine["code"] == code:
        return
    _ask_to_join(code)


def _ask_to_join(code: str) -> None:
    """A code from a link or the sidebar: open the join panel, or say why not."""
    ss = st.session_state
    limiter = ss.setdefault("class.limiter", C.JoinLimiter())
    if not limiter.allowed():
        ss[NOTICE] = ("error", "class.err.limit")
        return
    state, info, _ = _class_state(code) if code else ("gone", None, None)
    if state == "down":
        ss[NOTICE] = ("error", "class.err.store")
        return
    if state == "gone":
        limiter.failed()
        ss[NOTICE] = ("error", "class.err.unknown")
        return
    if not info.joining_open:
        ss[NOTICE] = ("error", "class.err.closed")
        return
    ss[PENDING] = code
    s = store()
    try:
        ss[SUGGESTED] = s.suggest_pseudonym(code)
    except C.ClassError:
        ss[SUGGESTED] = ""
    except Exception as e:
        failure(log, "proposing a pseudonym", e)
        ss[SUGGESTED] = ""


# ------------------------------------------------------------------------- joining and leaving

def _on_code() -> None:
    """Callback: a code typed in the sidebar."""
    st.session_state.pop(NOTICE, None)
    _ask_to_join(C.normalise_code(st.session_state.get("class.code_input", "")) or "")


def _on_join() -> None:
    """Callback: the learner picked a pseudonym in the join panel."""
    ss = st.session_state
    ss.pop(NOTICE, None)
    code = ss.get(PENDING)
    s = store()
    if not code or s is None:
        ss[NOTICE] = ("error", "class.err.store")
        return
    try:
        # An empty box takes the proposal, which it shows as its placeholder.
        learner = s.join(code, ss.get("class.pseudonym") or ss.get(SUGGESTED, ""))
    except C.UnknownClass:
        ss[NOTICE] = ("error", "class.err.unknown")
        ss.pop(PENDING, None)
        return
    except C.ClassClosed:
        ss[NOTICE] = ("error", "class.err.closed")
        ss.pop(PENDING, None)
        return
    except C.PseudonymTaken:
        ss["class.join_problem"] = "class.err.taken"
        return
    except C.PseudonymTooLong:
        ss["class.join_problem"] = "class.err.long"
        return
    except C.BadPseudonym:
        ss["class.join_problem"] = "class.err.bad"
        return
    except C.ClassError:  # StoreUnavailable (the store logs it), a full class
        ss["class.join_problem"] = "class.err.store"
        return
    except Exception as e:
        failure(log, "joining a class", e)
        ss["class.join_problem"] = "class.err.store"
        return
    ss.pop(PENDING, None)
    ss[MEMBER] = {"code": learner.code, "id": learner.id, "pseudonym": learner.pseudonym}
    ss[VISITED] = set()
    ss[NOTICE] = ("success", "class.join.done")
    # The first answers given before joining go at the end of this run (flush), and again after the
    # browser's copy of the progress comes back, if that is later.


def _on_cancel() -> None:
    st.session_state.pop(PENDING, None)
    st.session_state.pop(NOTICE, None)


def _on_dismiss() -> None:
    st.session_state.pop(NOTICE, None)


def forget() -> dict | None:
    """This session is no longer in a class (the browser's copy follows at the end of the run).
    The learner's answers stay theirs: only the membership and what waited to be sent go."""
    ss = st.session_state
    for key in (QUEUE, VISITED, SENT, "class.final_sent", OFFLINE):
        ss.pop(key, None)
    return ss.pop(MEMBER, None)


def _gone(code: str) -> None:
    """The class no longer knows this learner: forget the membership and say why, until they act."""
    s = store()
    try:
        deleted = s is None or s.class_info(code) is None
    except C.ClassError:  # the database went away meanwhile: the class is over for this browser either way
        deleted = True
    except Exception as e:
        failure(log, "reading a class", e)
        deleted = True
    _class_state.clear()
    forget()
    st.session_state[NOTICE] = ("warning", "class.gone.deleted" if deleted else "class.gone.removed")


def _on_leave() -> None:
    """Callback: leave the class (the class forgets this learner's data)."""
    st.session_state.pop(NOTICE, None)
    mine = forget()
    s = store()
    if mine and s is not None:
        try:
            s.leave(mine["id"])
        except C.ClassError:  # the database is down: the class's expiry deletes it anyway
            pass
        except Exception as e:
            failure(log, "leaving a class", e)


def join_panel() -> None:
    """The join panel, above the page, while a code waits for a pseudonym."""
    ss = st.session_state
    code = ss.get(PENDING)
    if not code:
        return
    state, info, _ = _class_state(code)
    if state != "ok":
        ss.pop(PENDING, None)
        return
    with st.container(border=True, key="class.join_panel"):
        st.subheader(t("class.join.title", name=info.code))
        if info.name:
            st.text(info.name)  # the teacher's words: as text, never markup
        st.markdown(t("class.join.privacy"))
        with st.form("class.join_form", border=False):
            # Room for more than a pseudonym's 32 characters: a longer one pasted gets a message
            # (class.err.long), not a silent cut by the browser. The proposal is the box's value and
            # its placeholder: Streamlit 1.67's box draws first with no value and puts its value in
            # at the next effect (on a busy page, a second or two later), and meanwhile the
            # placeholder shows the proposal; an empty box joins with it (_on_join).
            suggested = ss.get(SUGGESTED, "")
            st.text_input(t("class.join.pseudonym"), value=suggested, placeholder=suggested or None,
                          key="class.pseudonym", max_chars=MAX_TYPED, help=t("class.join.pseudonym_help"))
            st.form_submit_button(t("class.join.button"), on_click=_on_join, type="primary")
        problem = ss.pop("class.join_problem", None)
        if problem:
            st.error(t(problem, n=str(C.MAX_PSEUDONYM)))
        st.button(t("class.join.cancel"), key="class.join_cancel", on_click=_on_cancel)


def sidebar() -> None:
    """The sidebar's class box: a code to join, or the class and pseudonym with "leave"."""
    ss = st.session_state
    mine = member()
    with st.sidebar:
        notice = ss.get(NOTICE)
        if notice:
            kind, label = notice
            with st.container(key="class.notice"):
                getattr(st, kind)(t(label, name=mine["code"] if mine else ""))
                st.button(t("class.notice.close"), key="class.notice_close", on_click=_on_dismiss)
        if mine:
            with st.container(border=True, key="class.side"):
                state, info, _ = _class_state(mine["code"])
                st.caption(t("class.side.in"))
                st.text(f"{info.name} ({info.code})" if state == "ok" and info.name else mine["code"])
                st.caption(t("class.side.you"))
                st.text(mine["pseudonym"])  # as text: whatever it holds is never markup
                st.button(t("class.side.leave"), key="class.leave", on_click=_on_leave)
        else:
            with st.expander(t("class.side.join"), expanded=False):
                with st.form("class.code_form", clear_on_submit=True, border=False):
                    st.text_input(t("class.side.code"), key="class.code_input", max_chars=12,
                                  placeholder=t("class.side.code_placeholder"))
                    st.form_submit_button(t("class.side.go"), on_click=_on_code)


# ------------------------------------------------------------------------- pacing

def _go(lesson_id: str) -> None:
    st.switch_page(_page_of(lesson_id))


def _locked(lesson: str | None, pace) -> bool:
    upto = pace.open_upto if pace is not None else None
    return lesson is not None and upto in ORDER and ORDER.index(lesson) > ORDER.index(upto)


def _banner(lesson: str | None, was_locked: bool) -> None:
    """The teacher's lead, as a banner with a button to go there; a fragment that looks again every
    few seconds, so an idle learner sees it come (and a lesson just closed or opened reruns the page)."""
    mine = member()
    if not mine:
        return
    _drain()  # answers kept while the database was down go as soon as it answers, even on an idle page
    if not member():  # the class no longer knows this learner (removed, or the class deleted)
        st.rerun(scope="app")
    state, _, pace = _class_state(mine["code"])
    if state == "gone":  # deleted or expired while the learner was idle: said at once
        _gone(mine["code"])
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
    st.page_link(_page_of(upto), label=t("class.locked.go", title=title(upto)))


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
    state, _, pace = _class_state(code)
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
    state, info, pace = _class_state(mine["code"])
    if state == "gone":  # deleted or expired: the class is over for this browser too, and the learner is told
        _gone(mine["code"])
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
        if lesson not in visited and _send(lambda s: s.record_visit(mine["id"], lesson)):
            visited.add(lesson)
    return True


# ------------------------------------------------------------------------- reporting

def _send(call) -> bool:
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
                _gone(mine["code"])
            return True
        except C.ClassError:  # StoreUnavailable (the store logs it): the lesson goes on
            ok = False
        except Exception as e:
            failure(log, "sending to the class", e, once=True)
            ok = False
    st.session_state[OFFLINE] = not ok
    return ok


def answer_text(response) -> str:
    """What a first answer is sent as: the option's index for a choice, the number read from the
    box for a numeric question ("4,096 tokens" -> "4096"), the same in every language; never the
    words typed around it. Example: answer_text(2) -> "2"; answer_text("4096 Mario") -> "4096"
    """
    return C.canonical_answer(response)


def queue_answer(lesson_id: str, q, response, correct: bool) -> None:
    """From the quiz's Check callback: a first answer, kept as given with its verdict (in or out of
    a class); the class gets it at the end of the run (flush)."""
    firsts = st.session_state.setdefault(FIRSTS, {})
    firsts.setdefault(f"{lesson_id}:{q.id}", [answer_text(response), bool(correct)])


def _queue_firsts() -> None:
    """Hand the queue every first answer of this session's progress that this membership has not
    sent yet: each with its own text and verdict as kept when given. A first answer whose text was
    not kept (progress from a file, or from before texts were kept) goes with the answer in its box
    when that has the first's verdict, else with no text (it counts, its text is unknown)."""
    ss = st.session_state
    if not member():
        return
    sent = ss.setdefault(SENT, set())
    results = ss.get("quiz.results", {})
    todo = [(lesson, qid, bool(correct)) for lesson, answers in results.items()
            for qid, correct in answers.items() if f"{lesson}:{qid}" not in sent]
    if not todo:
        return
    firsts = ss.get(FIRSTS, {})
    queue = ss.setdefault(QUEUE, [])
    for lesson, qid, correct in todo:
        if len(queue) >= MAX_QUEUE:
            return
        kept = firsts.get(f"{lesson}:{qid}")
        if kept is not None and bool(kept[1]) == correct:
            answer = kept[0]
        else:
            shown = ss.get(f"quiz.{lesson}.{qid}.grade")
            box = ss.get(f"quiz.{lesson}.{qid}.answer")
            answer = answer_text(box) if shown is not None and shown.correct == correct and box is not None else ""
        queue.append(("answer", lesson, qid, answer, correct))
        sent.add(f"{lesson}:{qid}")


def report_final(correct: int, total: int) -> None:
    """The final quiz's score, once it is complete (sent again only if it changes)."""
    mine = member()
    if not mine or st.session_state.get("class.final_sent") == (mine["code"], correct, total):
        return
    if _send(lambda s: s.record_final(mine["id"], correct, total)):
        st.session_state["class.final_sent"] = (mine["code"], correct, total)


def _drain() -> None:
    """Send what the callbacks queued, in one transaction; kept for the next try when the database
    does not answer."""
    _queue_firsts()
    mine = member()
    queue = st.session_state.get(QUEUE)
    if not mine or not queue:
        return
    batch = [(lesson, qid, answer, correct) for _, lesson, qid, answer, correct in queue]
    if _send(lambda s: s.record_answers(mine["id"], batch)):
        del queue[:len(batch)]


def flush() -> None:
    """In the sidebar's progress section, which a quiz answer reruns: send what is queued and, while
    the class does not receive this learner's answers, say so there (right after the answer)."""
    was = member()
    _drain()
    mine = member()
    if was and not mine:  # the class no longer knows this learner: the sidebar above says why
        st.rerun(scope="app")
    if mine and (st.session_state.get(OFFLINE) or _class_state(mine["code"])[0] == "down"):
        st.warning(t("class.side.offline"))


# ------------------------------------------------------------------------- the browser's copy

def to_keep() -> str:
    """The membership and the first answers as given, as the browser keeps them ("" for neither).

    Example: '{"code":"K7QF3M","id":"Xy.s3","pseudonym":"Ada","firsts":{"numbers:q1":["4096",true]}}'
    """
    mine = dict(member() or {})
    firsts = st.session_state.get(FIRSTS)
    if firsts:
        mine["firsts"] = firsts
    return json.dumps(mine, separators=(",", ":")) if mine else ""


def _firsts_back(data: Mapping) -> None:
    """The first answers the browser kept, merged under this session's: the browser's are older, so
    theirs win (as lib.learner.progress_code.merge lets the older verdict win). Malformed entries are dropped."""
    kept = data.get("firsts")
    if not isinstance(kept, Mapping):
        return
    back = {}
    for key, value in list(kept.items())[:2000]:
        if (isinstance(key, str) and len(key) <= 130 and key.count(":") == 1 and isinstance(value, list)
                and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], bool)):
            back[key] = [C.canonical_answer(value[0]) if value[0] else "", value[1]]
    if back:
        st.session_state[FIRSTS] = {**st.session_state.get(FIRSTS, {}), **back}


def restore(raw: object) -> bool:
    """The membership the browser kept, back into a new session (unless this session has its own),
    and the first answers kept with it; True when the membership came back or a lesson was kept
    shut until it came (the page then runs again: the class box, the visit, the lesson or its lock)."""
    ss = st.session_state
    ss[HEARD] = True
    held = bool(ss.pop(HELD, False))
    return _restore(raw) or held


def to_cookie() -> dict:
    """The `itt_class` cookie the browser keeps: this session's class code ("" removes it), for as
    long as a class lives. Example: {"name": "itt_class", "value": "K7QF3M", "seconds": 2592000}"""
    return {"name": COOKIE, "value": (member() or {}).get("code", ""), "seconds": C.class_days() * 86_400}


def _restore(raw: object) -> bool:
    if not isinstance(raw, str) or not raw:
        return False
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    if not isinstance(data, Mapping):
        return False
    _firsts_back(data)
    if member() or not all(isinstance(data.get(k), (str, int)) for k in ("code", "id", "pseudonym")):
        return False
    s = store()
    try:
        learner = s.learner(str(data["id"])) if s is not None else None
    except C.ClassError:  # StoreUnavailable: keep the membership, the reports wait for the database
        learner = C.Learner(str(data["id"]), C.normalise_code(str(data["code"])), str(data["pseudonym"])[:64])
    except Exception as e:  # no membership back: better than one that may be wrong
        failure(log, "restoring a class membership", e)
        return False
    if learner is None or learner.code != C.normalise_code(str(data["code"])):
        return False
    st.session_state[MEMBER] = {"code": learner.code, "id": learner.id, "pseudonym": learner.pseudonym}
    return True
