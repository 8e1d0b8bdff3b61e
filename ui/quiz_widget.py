"""Check-yourself quizzes: one small form per question, the explanation after answering.

The first answer to each question is what counts (lib.quiz.record); a learner may try again to
learn, and sees the explanation every time.
"""

from __future__ import annotations

import streamlit as st

from lib.quiz import Question, grade, lesson_score, load_bank, record
from ui.core import lang, num, t


def ask(q: Question, key: str):
    """Draw one question inside a form; return (submitted, response) where response may be None."""
    with st.form(key=f"{key}.form", border=True):
        st.markdown(q.prompt)
        if q.kind == "choice":
            response = st.radio(t("quiz.choose"), options=range(len(q.options)), index=None,
                                format_func=lambda i: q.options[i], key=f"{key}.answer", label_visibility="collapsed")
        else:
            label = t("quiz.number") + (f" ({q.unit})" if q.unit else "")
            response = st.text_input(label, key=f"{key}.answer")
        submitted = st.form_submit_button(t("quiz.check"))
    return submitted, response


def verdict(q: Question, response, key: str):
    """Grade a response, remember the verdict under `key`, and return it (None if unreadable)."""
    if response is None or (isinstance(response, str) and not response.strip()):
        st.warning(t("quiz.no_answer"))
        return None
    try:
        g = grade(q, response)
    except ValueError:
        st.warning(t("quiz.not_a_number"))
        return None
    st.session_state[f"{key}.grade"] = g
    return g


def show(key: str) -> None:
    g = st.session_state.get(f"{key}.grade")
    if g is None:
        return
    if g.correct:
        st.success(t("quiz.right") + " " + g.explanation)
    else:
        st.error(t("quiz.wrong", expected=g.expected) + " " + g.explanation)


def render_quiz(lesson_id: str) -> None:
    """The lesson's check-yourself section, with its score."""
    bank = load_bank(lang(), lesson_id)
    st.header(t("quiz.title"))
    st.caption(t("quiz.first_counts"))
    for q in bank:
        key = f"quiz.{lesson_id}.{q.id}"
        submitted, response = ask(q, key)
        if submitted:
            g = verdict(q, response, key)
            if g is not None:
                st.session_state["quiz.results"] = record(st.session_state.get("quiz.results", {}),
                                                          lesson_id, q.id, g.correct)
        show(key)
    s = lesson_score(st.session_state.get("quiz.results", {}), lesson_id, bank)
    st.metric(t("quiz.score"), t("quiz.count", answered=num(s.answered), total=num(s.total), correct=num(s.correct)),
              help=t("quiz.score_help", answered=num(s.answered)))
