"""Progress that survives a reload, a new tab, a server restart and a switch of replica.

The learner's quiz answers, and the text they typed, are kept in their own browser (local storage of the app's origin),
through a small inline component (Streamlit components v2, no iframe, nothing fetched):

1. A new session mounts the component with a fresh session id and nothing to save; each run
   until the browser is heard draws it with a new count. For each count the component reads
   local storage and sends what it holds back, as a trigger value, once the app is idle (an ask
   can be lost when a lesson switch stops the run it started; the next run's count asks again).
2. The trigger's callback (before the script runs) merges that progress with the session's own
   (lib.learner.progress_code.merge: first answers count) and puts it into session state: scores,
   verdicts, the answers in their boxes, the final quiz's draw; and the learner's own text, over
   the example sentence (never over a text from a shared link).
3. From then on every run hands the component the session's progress as a code, and the text;
   the component writes them to local storage when they changed.

Nothing is written before step 2 has happened, so a session that has not heard from the browser
yet can never overwrite stored progress with an empty one. The same progress can be downloaded
as a small JSON file and loaded back (any browser, any machine). See docs/architecture.md.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import secrets
from collections.abc import Mapping

import streamlit as st

from lib.course import i18n
from lib.course.quiz import grade, load_bank
from lib.learner import progress_code as pc
from ui.classroom import access, reports
from ui.shell import nav, sidebar
from ui.shell.core import lang, num, t
from ui.shell.downloads import built_when_clicked
from ui.views import browser

STORE_KEY = "app.store"
PROGRESS_SECTION = "section:app.progress"  # the sidebar's progress and this store: a quiz answer reruns it
_LATEST = "app.persist.latest"  # {"progress": ...}: what the last run handed the browser (the download reads it)
LEARNER_KEY = "app.learner"  # the nickname whose progress this session keeps ("" for none)
CLASS_ENTRY = f"{pc.STORAGE_PREFIX}.class"  # the class joined on this browser (ui/classroom/reports.py), per nickname
_QUIZ_STATE = re.compile(r"^(quiz|final)\.")  # every quiz's and the final quiz's session keys
_FINAL_GRADE = re.compile(r"^final\.([a-z0-9_]+:[a-z0-9_]+)\.grade$")
log = logging.getLogger(__name__)

# Runs in the app's page (no iframe). Called again whenever `data` changes. Until Python has
# heard the browser, it reads the learner's entries (the nickname in use when Python names none)
# and sends them once per (session id, count); afterwards it writes the entries Python hands it
# ("" removes one). Entry names: lib.learner.progress_code.entries, built the same way here.
_JS = browser.script("progress_store")  # static/components/progress_store.js
_store = st.components.v2.component("itt_progress_store", js=_JS)


# ------------------------------------------------------------------------- session <-> progress

def _banks() -> dict:
    return {x.id: {q.id: q for q in load_bank(lang(), x.id)} for x in nav.LESSONS}


def current() -> dict:
    """The session's progress as plain data (lib.learner.progress_code's shape)."""
    # One copy of the session's state, then plain dict look-ups: each look-up in st.session_state
    # filters the whole state anew (a quarter of a quiz answer's time went there).
    ss = st.session_state.to_dict()
    out = pc.empty()
    out["results"] = {k: dict(v) for k, v in ss.get("quiz.results", {}).items()}
    for lesson, bank in _banks().items():
        for qid in bank:
            key = f"quiz.{lesson}.{qid}"
            if f"{key}.grade" in ss and ss.get(f"{key}.answer") is not None:
                out["responses"][f"{lesson}:{qid}"] = ss[f"{key}.answer"]
    out["final"]["seed"] = ss.get("final.seed")
    out["final"]["answers"] = dict(ss.get("final.answers", {}))
    for key in list(ss.keys()):
        m = _FINAL_GRADE.match(str(key))
        if m and ss.get(f"final.{m.group(1)}.answer") is not None:
            out["final"]["responses"][m.group(1)] = ss[f"final.{m.group(1)}.answer"]
    return pc.clean(out)[0]


def _put_answer(prefix: str, q, response) -> None:
    """The verdict and the answer in its box, as if the learner had just checked it."""
    if q.kind == "choice" and not (isinstance(response, int) and 0 <= response < len(q.options)):
        return
    if q.kind == "numeric" and not isinstance(response, str):
        return
    try:
        g = grade(q, response)
    except ValueError:
        return
    st.session_state[f"{prefix}.grade"] = g
    st.session_state[f"{prefix}.answer"] = response


def apply(stored: Mapping) -> None:
    """Put `stored` progress, merged with the session's own, into session state."""
    merged = pc.merge(stored, current())
    banks = _banks()
    st.session_state["quiz.results"] = merged["results"]
    for qkey, response in merged["responses"].items():
        lesson, qid = qkey.split(":")
        q = banks.get(lesson, {}).get(qid)
        if q is not None:
            _put_answer(f"quiz.{lesson}.{qid}", q, response)
    final = merged["final"]
    if final["seed"] is not None:
        st.session_state["final.seed"] = final["seed"]
        st.session_state["final.answers"] = dict(final["answers"])
        for qkey, response in final["responses"].items():
            lesson, qid = qkey.split(":")
            q = banks.get(lesson, {}).get(qid)
            if q is not None:
                _put_answer(f"final.{qkey}", q, response)


# ------------------------------------------------------------------------- the browser's copy

def class_entry(learner: str) -> str:
    """The local-storage entry of a learner's class membership, named like their progress's."""
    return f"{CLASS_ENTRY}.{learner}" if learner else CLASS_ENTRY


def _examples() -> tuple[str, ...]:
    return tuple(i18n.label(x, "text.example") for x in i18n.LANGS)


def _on_stored() -> None:
    """Callback: the browser sent what its local storage keeps (once per session, and once after
    each change of learner)."""
    ss = st.session_state
    value = ss.get(STORE_KEY)
    message = value.get("stored") if isinstance(value, Mapping) else None
    if not isinstance(message, Mapping) or message.get("sid") != ss.get("app.persist.sid"):
        return
    if ss.get("app.persist.restored"):
        # This session has heard the browser already: a later count's ask, sent before the browser
        # saw the answer (the count says which run drew it).
        log.debug("progress ask %s of session %s ignored: answered already", message.get("ask"), message.get("sid"))
        return
    learner = pc.nickname(message.get("learner", ""))
    if learner is None:  # a nickname this code would not have written: ask again for no name
        ss[LEARNER_KEY] = ""
        ss["app.persist.sid"] = secrets.token_hex(8)
        return
    ss[LEARNER_KEY] = learner
    # The class this learner joined on this browser, if any: the sidebar's class box and the lesson's
    # visit are drawn by a full run, which the rerun below gives (answers or none).
    rejoined = reports.restore(message.get("klass"))
    code = message.get("code")
    if isinstance(code, str) and code:
        try:
            stored, dropped = pc.decode(code)
            apply(stored)
            if dropped:
                ss["app.persist.notice"] = ("warning", "progress.partial", {"n": dropped})
        except pc.ProgressError:
            ss["app.persist.notice"] = ("warning", "progress.unreadable", {})
    restored = pc.text_to_restore(message.get("text"), ss.get("app.text", ""), _examples())
    if restored is not None:
        ss["app.text"] = restored
    if (isinstance(code, str) and code) or restored is not None or rejoined:
        # What came back shows on the lesson page too (verdicts, the text, the class): the section
        # this store sits in asks for a full run (see progress_section).
        ss["app.persist.rerun_page"] = True
    ss["app.persist.restored"] = True


def sync() -> None:
    """After the page: hand the session's progress and text to the browser (once it has been heard)."""
    ss = st.session_state
    sid = ss.setdefault("app.persist.sid", secrets.token_hex(8))
    progress = current()
    ss.setdefault(_LATEST, {})["progress"] = progress
    save = None
    # Each run that draws the store before the browser has been heard counts one more: the browser
    # asks again for each count. An ask can be lost: it reruns this section, and a lesson switch
    # sent at once stops that run (Streamlit's fast reruns) before its callback, and the switch's
    # own run carries no trigger. The switch's run draws the store with the next count.
    unheard = None
    if not ss.get("app.persist.restored"):
        unheard = ss["app.persist.unheard"] = ss.get("app.persist.unheard", 0) + 1
    else:
        learner = ss.get(LEARNER_KEY, "")
        names = pc.entries(learner)
        save = {pc.LEARNER_ENTRY: learner, names["progress"]: pc.encode(progress),
                names["text"]: pc.text_to_keep(ss.get("app.text", ""), _examples()),
                class_entry(learner): reports.to_keep()}
    # The class's code also as a cookie the server reads at a new tab's first run (ui/classroom/reports.py).
    cookie = reports.to_cookie() if save is not None else None
    _store(key=STORE_KEY, data={"sid": sid, "unheard": unheard, "save": save, "learner": ss.get(LEARNER_KEY),
                                "learnerEntry": pc.LEARNER_ENTRY, "progressEntry": pc.PROGRESS_ENTRY,
                                "textEntry": pc.TEXT_ENTRY, "classEntry": CLASS_ENTRY, "cookie": cookie},
           on_stored_change=_on_stored, height=0)


# ------------------------------------------------------------------------- a file to keep

def _on_upload() -> None:
    """Callback: a progress file was chosen; merge it in, or say why not."""
    ss = st.session_state
    upload = ss.get("app.progress_upload")
    if upload is None:
        return
    try:
        stored, dropped = pc.from_file(upload.getvalue())
    except pc.ProgressError:
        ss["app.persist.notice"] = ("error", "progress.bad_file", {"name": upload.name})
        return
    apply(stored)
    answered = sum(len(v) for v in stored["results"].values()) + len(stored["final"]["answers"])
    ss["app.persist.notice"] = ("success", "progress.loaded", {"n": answered})
    if dropped:
        ss["app.persist.notice_more"] = ("warning", "progress.partial", {"n": dropped})


def notices() -> None:
    """Messages left by the callbacks (they may not draw), shown in the sidebar once."""
    for key in ("app.persist.notice", "app.persist.notice_more"):
        notice = st.session_state.pop(key, None)
        if notice:
            kind, label, values = notice
            getattr(st, kind)(t(label, **{k: num(v) if isinstance(v, int) else v for k, v in values.items()}))


def file_controls() -> None:
    """Download the progress as a file; load such a file back."""
    latest = st.session_state.setdefault(_LATEST, {})

    def progress_file() -> bytes:
        """Built when the learner clicks (quiz answers since the last full run included)."""
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return pc.to_file(latest.get("progress") or pc.empty(), stamp)

    with st.sidebar.expander(t("progress.keep"), expanded=False):
        st.caption(t("progress.kept_here"))
        st.download_button(t("progress.download"), file_name="inside-transformer-progress.json", mime="application/json",
                           data=built_when_clicked(progress_file, "application/json", "inside-transformer-progress.json"),
                           key="app.progress_download", on_click="ignore")
        st.file_uploader(t("progress.load"), type=["json", "txt"], key="app.progress_upload",
                         on_change=_on_upload, help=t("progress.load_help"))


# ------------------------------------------------------------------------- a computer shared by a class

def _clear_session_progress() -> None:
    """Forget this session's answers and text (what a new learner at the same browser starts from)."""
    ss = st.session_state
    for key in [k for k in ss if _QUIZ_STATE.match(str(k))]:
        if str(key).endswith(".answer"):  # a widget: emptied, so the box in the browser empties too
            ss[key] = "" if isinstance(ss[key], str) else None
        else:
            del ss[key]
    ss["app.text"] = t("text.example")
    ss.pop("app.learner.confirm", None)
    access.forget()  # another learner at this browser is not in the last one's class (theirs comes back)


def _on_nickname() -> None:
    """Callback: the learner gave a nickname; their own progress and text come from the browser."""
    ss = st.session_state
    name = pc.nickname(ss.get("app.learner_input", ""))
    if not name:
        ss["app.persist.notice"] = ("error", "learner.bad_name", {"n": pc.MAX_NICKNAME})
        return
    if name == ss.get(LEARNER_KEY, ""):
        return
    _clear_session_progress()
    ss[LEARNER_KEY] = name
    # A new ask: the browser reads this learner's entries and sends them; nothing is written until then.
    ss["app.persist.sid"] = secrets.token_hex(8)
    ss["app.persist.restored"] = False
    ss["app.persist.notice"] = ("success", "learner.switched", {"name": name})


def _on_afresh() -> None:
    """Callback: "start afresh, not me": no nickname, and the browser's unnamed progress and text
    emptied (a nickname's progress stays kept under it)."""
    ss = st.session_state
    _clear_session_progress()
    ss[LEARNER_KEY] = ""
    # Written over at the end of this run; a browser message still on its way for the old ask is ignored.
    ss["app.persist.sid"] = secrets.token_hex(8)
    ss["app.persist.restored"] = True
    ss["app.persist.notice"] = ("success", "learner.fresh", {})


def _on_confirm(value: bool) -> None:
    st.session_state["app.learner.confirm"] = value


def learner_controls() -> None:
    """Sidebar: who is learning on this browser (a nickname), and "start afresh, not me"."""
    ss = st.session_state
    name = ss.get(LEARNER_KEY, "")
    with st.sidebar.expander(t("learner.title"), expanded=False):
        st.markdown(t("learner.named", name=name) if name else t("learner.anonymous"))
        st.caption(t("learner.explain"))
        with st.form("app.learner_form", clear_on_submit=True, border=False):
            st.text_input(t("learner.input"), key="app.learner_input", max_chars=pc.MAX_NICKNAME,
                          placeholder=t("learner.placeholder"))
            st.form_submit_button(t("learner.use"), on_click=_on_nickname)
        if not ss.get("app.learner.confirm"):
            st.button(t("learner.afresh"), key="app.learner.afresh", on_click=_on_confirm, args=(True,))
        else:
            st.warning(t("learner.afresh_explain"))
            c1, c2 = st.columns(2)
            c1.button(t("learner.afresh_confirm"), key="app.learner.afresh_yes", on_click=_on_afresh, type="primary")
            c2.button(t("learner.cancel"), key="app.learner.afresh_no", on_click=_on_confirm, args=(False,))


def progress_section() -> None:
    """The sidebar's progress, the notices, and the browser's copy: one section (a keyed fragment)
    that a quiz answer reruns alone, with the question's own section."""
    nav.back_to_shown()  # an ask sent just after a lesson's click names the page left
    ss = st.session_state
    if ss.pop("app.persist.rerun_page", False):
        st.rerun()  # progress (or the text) came back from the browser: the page shows it too
    sidebar.progress()
    notices()
    reports.flush()  # a first answer just given goes to the class, if the learner joined one
    sync()


def render() -> None:
    """Everything of this module, after the page has run (one call from app.py)."""
    with st.sidebar:
        st.fragment(key=PROGRESS_SECTION)(progress_section)()
    learner_controls()
    file_controls()
