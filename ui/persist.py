"""Progress that survives a reload, a new tab, a server restart and a switch of replica.

The learner's quiz answers are kept in their own browser (local storage of the app's origin),
through a small inline component (Streamlit components v2, no iframe, nothing fetched):

1. A new session mounts the component with a fresh session id and nothing to save. The
   component reads local storage and sends what it holds back once, as a trigger value.
2. The trigger's callback (before the script runs) merges that progress with the session's own
   (lib.progress_code.merge: first answers count) and puts it into session state: scores,
   verdicts, the answers in their boxes, the final quiz's draw.
3. From then on every run hands the component the session's progress as a code; the component
   writes it to local storage when it changed.

Nothing is written before step 2 has happened, so a session that has not heard from the browser
yet can never overwrite stored progress with an empty one. The same progress can be downloaded
as a small JSON file and loaded back (any browser, any machine). See docs/progress.md.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Mapping

import streamlit as st

from lib import progress_code as pc
from lib.quiz import grade, load_bank
from ui import nav, sidebar
from ui.core import lang, num, t
from ui.sidebar import TEXT_KEPT

STORE_KEY = "app.store"
PROGRESS_SECTION = "section:app.progress"  # the sidebar's progress and this store: a quiz answer reruns it
_LATEST = "app.persist.latest"  # {"progress": ...}: what the last run handed the browser (the download reads it)
STORAGE_NAME = "inside-transformer.progress"  # the local-storage entry (one per origin)
_FINAL_GRADE = re.compile(r"^final\.([a-z0-9_]+:[a-z0-9_]+)\.grade$")

# Runs in the app's page (no iframe). Called again whenever `data` changes; asks the browser
# once per server session, then writes what Python hands it.
_JS = """
export default function ({ data, setTriggerValue }) {
  const name = data.name;
  let kept = null;
  try { kept = window.localStorage.getItem(name); } catch (e) { kept = null; }
  if (typeof data.save === "string") {
    // The browser has been heard: a mark the browser tests wait for before their first input,
    // so that input does not race the session's one progress rerun.
    document.documentElement.dataset.ittProgress = "ready";
    if (data.save !== kept) {
      try { window.localStorage.setItem(name, data.save); } catch (e) { /* full or forbidden */ }
    }
  } else if (window.__ittProgressAsked !== data.sid) {
    window.__ittProgressAsked = data.sid;
    setTriggerValue("stored", { sid: data.sid, code: kept });
  }
}
"""
_store = st.components.v2.component("itt_progress_store", js=_JS)


# ------------------------------------------------------------------------- session <-> progress

def _banks() -> dict:
    return {x.id: {q.id: q for q in load_bank(lang(), x.id)} for x in nav.LESSONS}


def current() -> dict:
    """The session's progress as plain data (lib.progress_code's shape)."""
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

def _on_stored() -> None:
    """Callback: the browser sent what its local storage keeps (once per session)."""
    ss = st.session_state
    # That message is not the learner typing: when it follows a lesson switch at once, the browser
    # sends it with the text box empty (measured: the text went from 44 characters to none, and
    # every section needing it vanished). Keep the text the last run had.
    kept = ss.get(TEXT_KEPT)
    text_back = bool(kept and not ss.get("app.text"))
    if text_back:
        ss["app.text"] = kept
    value = ss.get(STORE_KEY)
    message = value.get("stored") if isinstance(value, Mapping) else None
    if not isinstance(message, Mapping) or message.get("sid") != ss.get("app.persist.sid"):
        return
    code = message.get("code")
    if isinstance(code, str) and code:
        try:
            stored, dropped = pc.decode(code)
            apply(stored)
            if dropped:
                ss["app.persist.notice"] = ("warning", "progress.partial", {"n": dropped})
        except pc.ProgressError:
            ss["app.persist.notice"] = ("warning", "progress.unreadable", {})
    if (isinstance(code, str) and code) or text_back:
        # What came back shows on the lesson page too (verdicts, the text): the section this
        # store sits in asks for a full run (see progress_section).
        ss["app.persist.rerun_page"] = True
    ss["app.persist.restored"] = True


def sync() -> None:
    """After the page: hand the session's progress to the browser (once it has been heard)."""
    ss = st.session_state
    sid = ss.setdefault("app.persist.sid", secrets.token_hex(8))
    progress = current()
    ss.setdefault(_LATEST, {})["progress"] = progress
    save = pc.encode(progress) if ss.get("app.persist.restored") else None
    _store(key=STORE_KEY, data={"sid": sid, "save": save, "name": STORAGE_NAME},
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
        st.download_button(t("progress.download"), data=progress_file,
                           file_name="inside-transformer-progress.json", mime="application/json",
                           key="app.progress_download", on_click="ignore")
        st.file_uploader(t("progress.load"), type=["json", "txt"], key="app.progress_upload",
                         on_change=_on_upload, help=t("progress.load_help"))


def progress_section() -> None:
    """The sidebar's progress, the notices, and the browser's copy: one section (a keyed fragment)
    that a quiz answer reruns alone, with the question's own section."""
    ss = st.session_state
    if ss.pop("app.persist.rerun_page", False):
        st.rerun()  # progress (or the text) came back from the browser: the page shows it too
    sidebar.progress()
    notices()
    sync()


def render() -> None:
    """Everything of this module, after the page has run (one call from app.py)."""
    with st.sidebar:
        st.fragment(key=PROGRESS_SECTION)(progress_section)()
    file_controls()
