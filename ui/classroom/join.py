"""Joining and leaving a class: a code from the address or the sidebar, the join panel that asks for
a pseudonym, and the sidebar's class box (the class and the pseudonym, with "leave")."""

from __future__ import annotations

import logging

import streamlit as st

from lib.classroom import classroom as C
from lib.serving.log import failure
from ui.classroom.access import (MEMBER, NOTICE, PENDING, SUGGESTED, TEACHER, VISITED, class_state, forget, member,
                                 store)
from ui.shell.core import t

MAX_TYPED = 200  # characters the pseudonym box takes (more than a pseudonym may have, see _on_join)
log = logging.getLogger(__name__)


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
    state, info, _ = class_state(code) if code else ("gone", None, None)
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


def _on_cancel() -> None:
    st.session_state.pop(PENDING, None)
    st.session_state.pop(NOTICE, None)


def _on_dismiss() -> None:
    st.session_state.pop(NOTICE, None)


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
    state, info, _ = class_state(code)
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
                state, info, _ = class_state(mine["code"])
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
